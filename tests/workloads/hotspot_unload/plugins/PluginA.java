// build: see ../HotspotUnload.java (loaded by a class loader of its own)
public class PluginA implements java.util.function.LongUnaryOperator {
    static long spinA(long x) {
        long s = x;
        for (int i = 0; i < 50000; i++)
            s = s * 31 + (s >>> 7) + i;
        return s;
    }

    public long applyAsLong(long x) {
        return spinA(x) + 1;
    }
}
