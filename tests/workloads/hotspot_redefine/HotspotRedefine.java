// build: javac, then jar with MANIFEST.MF (tests/e2e/test_hotspot.c does it)
// A JVM whose own agent redefines a class while it runs: the jar's manifest
// names this class its Launcher-Agent-Class (with Can-Redefine-Classes), so
// the JVM starts it as a java.lang.instrument agent before main, with no
// command-line flag. A thread redefines RedefineHot every PERIOD_MS (with its
// own bytes: each redefinition makes new Methods and frees the old ones that
// no stack holds, at a safepoint and without a collection) while main runs
// RedefineHot's chain a -> b -> spin. Usage: HotspotRedefine SECONDS
// PERIOD_MS: prints "ready" after the first redefinition.
import java.io.InputStream;
import java.lang.instrument.ClassDefinition;
import java.lang.instrument.Instrumentation;

public class HotspotRedefine {
    static volatile Instrumentation inst;
    static volatile long sink;
    static volatile long redefinitions;

    public static void agentmain(String args, Instrumentation i) {
        inst = i;
    }

    static void redefine(byte[] bytes) throws Exception {
        inst.redefineClasses(new ClassDefinition(RedefineHot.class, bytes));
        redefinitions++;
    }

    public static void main(String[] args) throws Exception {
        long end = System.currentTimeMillis() + Long.parseLong(args[0]) * 1000;
        long period = Long.parseLong(args[1]);
        byte[] bytes;

        try (InputStream in = HotspotRedefine.class.getResourceAsStream("RedefineHot.class")) {
            bytes = in.readAllBytes();
        }
        redefine(bytes);
        Thread t = new Thread(() -> {
            try {
                while (true) {
                    Thread.sleep(period);
                    redefine(bytes);
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        t.setDaemon(true);
        t.start();
        System.out.println("ready");
        System.out.flush();
        while (System.currentTimeMillis() < end)
            sink += RedefineHot.a(sink);
        System.out.println("redefinitions " + redefinitions);
    }
}

class RedefineHot {
    static long a(long x) {
        return b(x) + 1;
    }

    static long b(long x) {
        return spin(x) * 3;
    }

    static long spin(long x) {
        long s = x;
        for (int i = 0; i < 2000000; i++)
            s = s * 31 + (s >>> 7) + i;
        return s;
    }
}
