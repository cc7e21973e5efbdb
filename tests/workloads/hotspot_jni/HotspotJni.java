// build: javac -d <out> tests/workloads/hotspot_jni/HotspotJni.java
//        gcc -O2 -g -shared -fPIC -I$JDK/include -I$JDK/include/linux
//            tests/workloads/hotspot_jni/hotspot_jni.c -o <out>/libhotspot_jni.so
// Java -> JNI native method -> C -> Java callback: main -> run -> viaNative
// (native, hotspot_jni.c's Java_HotspotJni_viaNative, which calls back
// through CallStaticLongMethod) -> callback -> spin. Usage: HotspotJni
// SECONDS WARMUP_MS, with java.library.path holding libhotspot_jni.so.
public class HotspotJni {
    static volatile long sink;

    static native long viaNative(long x);

    static long spin(long x) {
        long s = x;
        for (int i = 0; i < 20000; i++)
            s = s * 31 + (s >>> 7) + i;
        return s;
    }

    static long callback(long x) {
        return spin(x) + 1;
    }

    static void run(long endMillis) {
        long t = 0;
        while (System.currentTimeMillis() < endMillis)
            t += viaNative(t);
        sink = t;
    }

    public static void main(String[] args) throws Exception {
        System.loadLibrary("hotspot_jni");
        long start = System.currentTimeMillis();
        run(start + Long.parseLong(args[1]));
        System.out.println("ready");
        System.out.flush();
        run(start + Long.parseLong(args[0]) * 1000);
    }
}
