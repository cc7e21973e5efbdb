// build: javac -d <out> bench/workloads/JavaWide.java (bench/run.py does it)
// A Java stack of 40 distinct methods (m0 calls m1 ... m39 calls leaf), spinning
// in its leaf, for the BPF cost per sample of Java frames that are not one
// method recursing (the walker's per-walk caches of code blobs, scopes and
// Method -> ConstMethod pairs see 40 of each). Run with
// -XX:CompileCommand=dontinline,JavaWide::m* each is its own C2 nmethod; without
// it C2 inlines them as it chooses (inlined frames decoded from scopes).
// Usage: JavaWide SECONDS: warms up (C2 compiles the chain) for 3 s, prints
// "ready", runs until SECONDS. Written out (not generated) so its frames keep
// their lines.
public class JavaWide {
    static volatile long sink;

    static long leaf(long x) {
        long s = x;
        for (int i = 0; i < 100000; i++)
            s = s * 31 + (s >>> 7) + i;
        return s;
    }

    static long m0(long x) {
        return m1(x) + 0;
    }

    static long m1(long x) {
        return m2(x) + 1;
    }

    static long m2(long x) {
        return m3(x) + 2;
    }

    static long m3(long x) {
        return m4(x) + 3;
    }

    static long m4(long x) {
        return m5(x) + 4;
    }

    static long m5(long x) {
        return m6(x) + 5;
    }

    static long m6(long x) {
        return m7(x) + 6;
    }

    static long m7(long x) {
        return m8(x) + 7;
    }

    static long m8(long x) {
        return m9(x) + 8;
    }

    static long m9(long x) {
        return m10(x) + 9;
    }

    static long m10(long x) {
        return m11(x) + 10;
    }

    static long m11(long x) {
        return m12(x) + 11;
    }

    static long m12(long x) {
        return m13(x) + 12;
    }

    static long m13(long x) {
        return m14(x) + 13;
    }

    static long m14(long x) {
        return m15(x) + 14;
    }

    static long m15(long x) {
        return m16(x) + 15;
    }

    static long m16(long x) {
        return m17(x) + 16;
    }

    static long m17(long x) {
        return m18(x) + 17;
    }

    static long m18(long x) {
        return m19(x) + 18;
    }

    static long m19(long x) {
        return m20(x) + 19;
    }

    static long m20(long x) {
        return m21(x) + 20;
    }

    static long m21(long x) {
        return m22(x) + 21;
    }

    static long m22(long x) {
        return m23(x) + 22;
    }

    static long m23(long x) {
        return m24(x) + 23;
    }

    static long m24(long x) {
        return m25(x) + 24;
    }

    static long m25(long x) {
        return m26(x) + 25;
    }

    static long m26(long x) {
        return m27(x) + 26;
    }

    static long m27(long x) {
        return m28(x) + 27;
    }

    static long m28(long x) {
        return m29(x) + 28;
    }

    static long m29(long x) {
        return m30(x) + 29;
    }

    static long m30(long x) {
        return m31(x) + 30;
    }

    static long m31(long x) {
        return m32(x) + 31;
    }

    static long m32(long x) {
        return m33(x) + 32;
    }

    static long m33(long x) {
        return m34(x) + 33;
    }

    static long m34(long x) {
        return m35(x) + 34;
    }

    static long m35(long x) {
        return m36(x) + 35;
    }

    static long m36(long x) {
        return m37(x) + 36;
    }

    static long m37(long x) {
        return m38(x) + 37;
    }

    static long m38(long x) {
        return m39(x) + 38;
    }

    static long m39(long x) {
        return leaf(x) + 39;
    }

    static void run(long endMillis) {
        long t = 0;
        while (System.currentTimeMillis() < endMillis)
            t += m0(t);
        sink = t;
    }

    public static void main(String[] args) {
        long start = System.currentTimeMillis();
        run(start + 3000);
        System.out.println("ready");
        System.out.flush();
        run(start + Long.parseLong(args[0]) * 1000);
    }
}
