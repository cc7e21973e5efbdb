// build: javac -d <out>/app tests/workloads/hotspot_unload/HotspotUnload.java
//        javac -d <out>/plugins tests/workloads/hotspot_unload/plugins/*.java
// Class unloading and code cache reuse: each cycle loads PluginA or PluginB
// (alternately) with a class loader of its own, runs its applyAsLong (which
// calls its spin) until the JIT compiled it, then drops the loader and runs a
// full GC: the class is unloaded, its methods and nmethods freed, and the
// next plugin's may take their addresses. Usage: HotspotUnload SECONDS
// PLUGINS_DIR [CYCLE_MS, 150]; "ready" after the first two cycles.
import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.function.LongUnaryOperator;

public class HotspotUnload {
    static volatile long sink;

    static long cycle(URL plugins, String name, long millis) throws Exception {
        long t = 0;
        try (URLClassLoader loader = new URLClassLoader(new URL[] {plugins}, null)) {
            LongUnaryOperator op = (LongUnaryOperator) loader.loadClass(name)
                    .getDeclaredConstructor().newInstance();
            long end = System.currentTimeMillis() + millis;
            while (System.currentTimeMillis() < end)
                t += op.applyAsLong(t);
        }
        return t;
    }

    public static void main(String[] args) throws Exception {
        long end = System.currentTimeMillis() + Long.parseLong(args[0]) * 1000;
        URL plugins = new File(args[1]).toURI().toURL();
        long cycleMs = args.length > 2 ? Long.parseLong(args[2]) : 150;
        for (int i = 0; System.currentTimeMillis() < end; i++) {
            sink += cycle(plugins, i % 2 == 0 ? "PluginA" : "PluginB", cycleMs);
            System.gc();
            if (i == 1) {
                System.out.println("ready");
                System.out.flush();
            }
        }
    }
}
