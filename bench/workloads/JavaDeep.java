// build: javac -d <out> bench/workloads/JavaDeep.java (bench/run.py does it)
// A Java stack DEPTH frames deep, spinning in its leaf, for the BPF cost per
// sample of Java frames. Usage: JavaDeep SECONDS DEPTH: warms up (C2
// compiles the recursion) for 3 s, prints "ready", runs until SECONDS.
public class JavaDeep {
    static volatile long sink;

    static long leaf(long x) {
        long s = x;
        for (int i = 0; i < 100000; i++)
            s = s * 31 + (s >>> 7) + i;
        return s;
    }

    static long down(int depth, long x) {
        if (depth <= 1)
            return leaf(x);
        return down(depth - 1, x) + 1;
    }

    static void run(long endMillis, int depth) {
        long t = 0;
        while (System.currentTimeMillis() < endMillis)
            t += down(depth, t);
        sink = t;
    }

    public static void main(String[] args) {
        long start = System.currentTimeMillis();
        int depth = Integer.parseInt(args[1]);
        run(start + 3000, depth);
        System.out.println("ready");
        System.out.flush();
        run(start + Long.parseLong(args[0]) * 1000, depth);
    }
}
