// build: see ../HotspotUnload.java (loaded by a class loader of its own)
public class PluginB implements java.util.function.LongUnaryOperator {
    static long spinB(long x) {
        long s = x;
        for (int i = 0; i < 50000; i++)
            s = s * 37 + (s >>> 5) + i;
        return s;
    }

    public long applyAsLong(long x) {
        return spinB(x) + 2;
    }
}
