// build: javac -d <out> tests/workloads/hotspot_chain/HotspotChain.java
// The Java chain the HotSpot e2e test profiles: main -> run -> a -> b -> c -> work.
// a, b and c are small (C1 and C2 inline them into run); work is too big to
// inline (more than FreqInlineSize bytes of bytecode), so a sample in it has
// run's frame above it with a, b and c inlined there. Usage: HotspotChain
// SECONDS [THREADS [WARMUP_MS]]: every thread (main alone when THREADS is 0)
// runs the chain for WARMUP_MS (the JIT compiles it), then "ready" is
// printed, then the chain runs until SECONDS have passed.
// main alone calls run once (a thread of its own prints "ready"): that one
// activation, entered in the interpreter, can only move to an OSR
// compilation of run (an nmethod entered at the loop's bci), never to run's
// ordinary nmethod, so the compiled modes sample run in OSR code. The
// threads call run again every 10 ms: run's ordinary nmethod.
public class HotspotChain {
    static volatile long sink;

    static long work(long x) {
        long s = x;
        for (int r = 0; r < 50; r++) {
            s = s * 31 + (x ^ 3) + (s >>> 1);
            s = s * 31 + (x ^ 10) + (s >>> 2);
            s = s * 31 + (x ^ 17) + (s >>> 3);
            s = s * 31 + (x ^ 24) + (s >>> 4);
            s = s * 31 + (x ^ 31) + (s >>> 5);
            s = s * 31 + (x ^ 38) + (s >>> 6);
            s = s * 31 + (x ^ 45) + (s >>> 7);
            s = s * 31 + (x ^ 52) + (s >>> 8);
            s = s * 31 + (x ^ 59) + (s >>> 9);
            s = s * 31 + (x ^ 66) + (s >>> 10);
            s = s * 31 + (x ^ 73) + (s >>> 11);
            s = s * 31 + (x ^ 80) + (s >>> 12);
            s = s * 31 + (x ^ 87) + (s >>> 13);
            s = s * 31 + (x ^ 94) + (s >>> 1);
            s = s * 31 + (x ^ 101) + (s >>> 2);
            s = s * 31 + (x ^ 108) + (s >>> 3);
            s = s * 31 + (x ^ 115) + (s >>> 4);
            s = s * 31 + (x ^ 122) + (s >>> 5);
            s = s * 31 + (x ^ 129) + (s >>> 6);
            s = s * 31 + (x ^ 136) + (s >>> 7);
            s = s * 31 + (x ^ 143) + (s >>> 8);
            s = s * 31 + (x ^ 150) + (s >>> 9);
            s = s * 31 + (x ^ 157) + (s >>> 10);
            s = s * 31 + (x ^ 164) + (s >>> 11);
            s = s * 31 + (x ^ 171) + (s >>> 12);
            s = s * 31 + (x ^ 178) + (s >>> 13);
            s = s * 31 + (x ^ 185) + (s >>> 1);
            s = s * 31 + (x ^ 192) + (s >>> 2);
            s = s * 31 + (x ^ 199) + (s >>> 3);
            s = s * 31 + (x ^ 206) + (s >>> 4);
            s = s * 31 + (x ^ 213) + (s >>> 5);
            s = s * 31 + (x ^ 220) + (s >>> 6);
            s = s * 31 + (x ^ 227) + (s >>> 7);
            s = s * 31 + (x ^ 234) + (s >>> 8);
            s = s * 31 + (x ^ 241) + (s >>> 9);
            s = s * 31 + (x ^ 248) + (s >>> 10);
            s = s * 31 + (x ^ 255) + (s >>> 11);
            s = s * 31 + (x ^ 262) + (s >>> 12);
            s = s * 31 + (x ^ 269) + (s >>> 13);
            s = s * 31 + (x ^ 276) + (s >>> 1);
            s = s * 31 + (x ^ 283) + (s >>> 2);
            s = s * 31 + (x ^ 290) + (s >>> 3);
            s = s * 31 + (x ^ 297) + (s >>> 4);
            s = s * 31 + (x ^ 304) + (s >>> 5);
            s = s * 31 + (x ^ 311) + (s >>> 6);
            s = s * 31 + (x ^ 318) + (s >>> 7);
            s = s * 31 + (x ^ 325) + (s >>> 8);
            s = s * 31 + (x ^ 332) + (s >>> 9);
            s = s * 31 + (x ^ 339) + (s >>> 10);
            s = s * 31 + (x ^ 346) + (s >>> 11);
            s = s * 31 + (x ^ 353) + (s >>> 12);
            s = s * 31 + (x ^ 360) + (s >>> 13);
            s = s * 31 + (x ^ 367) + (s >>> 1);
            s = s * 31 + (x ^ 374) + (s >>> 2);
            s = s * 31 + (x ^ 381) + (s >>> 3);
            s = s * 31 + (x ^ 388) + (s >>> 4);
            s = s * 31 + (x ^ 395) + (s >>> 5);
            s = s * 31 + (x ^ 402) + (s >>> 6);
            s = s * 31 + (x ^ 409) + (s >>> 7);
            s = s * 31 + (x ^ 416) + (s >>> 8);
        }
        return s;
    }

    static long c(long x) {
        return work(x) + 1;
    }

    static long b(long x) {
        return c(x) + 2;
    }

    static long a(long x) {
        return b(x) + 3;
    }

    static void run(long endMillis) {
        long t = 0;
        while (System.currentTimeMillis() < endMillis) {
            for (int i = 0; i < 100; i++)
                t += a(t);
        }
        sink = t;
    }

    static void ready() {
        System.out.println("ready");
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        long start = System.currentTimeMillis();
        long end = start + Long.parseLong(args[0]) * 1000;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        long warmup = args.length > 2 ? Long.parseLong(args[2]) : 0;
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            ts[i] = new Thread(() -> {
                for (long now; (now = System.currentTimeMillis()) < end;)
                    run(Math.min(end, now + 10));
            }, "chain-" + i);
            ts[i].start();
        }
        if (threads == 0) {
            Thread announce = new Thread(() -> {
                try {
                    Thread.sleep(warmup);
                } catch (InterruptedException e) {
                    return;
                }
                ready();
            }, "ready");
            announce.start();
            run(end);
        } else {
            Thread.sleep(warmup);
            ready();
        }
        for (Thread t : ts)
            t.join();
    }
}
