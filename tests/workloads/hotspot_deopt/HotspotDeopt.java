// build: javac -d <out> tests/workloads/hotspot_deopt/HotspotDeopt.java (tests/e2e/test_hotspot.c does it)
// Compiled frames deoptimised while they wait for a callee. outer() calls the
// target of a MutableCallSite (the JIT inlines it, depending on the call
// site) and then spin(), the leaf (not inlined: the test's
// -XX:CompileCommand=dontinline). A long spin first changes the call site's
// target: the JVM invalidates outer's nmethod and patches the return address
// of outer's frame, below spin, to the nmethod's deopt handler, where the
// frame waits for the rest of the spin (SPIN_MS). A profiler must name that
// frame outer, from the pc the frame had, not from the handler. Short calls
// in between compile outer again. Usage: HotspotDeopt SECONDS WARMUP_MS:
// prints "ready" after WARMUP_MS.
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.MutableCallSite;

public class HotspotDeopt {
    static final int SPIN_MS = 100;
    static final MethodType TYPE = MethodType.methodType(long.class, long.class);
    static final MutableCallSite SITE = new MutableCallSite(TYPE);
    static final MethodHandle CALL = SITE.dynamicInvoker();
    static volatile long sink;
    static volatile long spinUntil;
    static MethodHandle a, b;
    static boolean odd;

    static long plusOne(long x) {
        return x + 1;
    }

    static long timesThree(long x) {
        return x * 3;
    }

    static long spin(long x) {
        long s = x;
        if (spinUntil != 0)
            SITE.setTarget((odd = !odd) ? b : a);
        while (System.nanoTime() < spinUntil)
            for (int i = 0; i < 1000; i++)
                s = s * 31 + (s >>> 7) + i;
        return s;
    }

    static long outer(long x) throws Throwable {
        long y = (long) CALL.invokeExact(x);
        return spin(y) + 1;
    }

    static void run(long endMillis) throws Throwable {
        long t = 0;
        while (System.currentTimeMillis() < endMillis) {
            // Short calls (spinUntil passed) keep outer hot and compiled again;
            // then one long one, during which its nmethod is invalidated.
            spinUntil = 0;
            for (int i = 0; i < 200000; i++)
                t += outer(t);
            spinUntil = System.nanoTime() + SPIN_MS * 1000000L;
            t += outer(t);
        }
        sink = t;
    }

    public static void main(String[] args) throws Throwable {
        MethodHandles.Lookup l = MethodHandles.lookup();
        a = l.findStatic(HotspotDeopt.class, "plusOne", TYPE);
        b = l.findStatic(HotspotDeopt.class, "timesThree", TYPE);
        long start = System.currentTimeMillis();
        long end = start + Long.parseLong(args[0]) * 1000;
        SITE.setTarget(a);
        run(start + Long.parseLong(args[1]));
        System.out.println("ready");
        System.out.flush();
        run(end);
    }
}
