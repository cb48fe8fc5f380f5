import java.security.MessageDigest;
import java.util.Arrays;

public class Work {
    static byte[] digest(int n) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        byte[] h = new byte[32];
        for (int i = 0; i < n; i++) { md.update(h); h = md.digest(); }
        return h;
    }
    static int sortWork(int n) {
        int[] xs = new int[n];
        for (int i = 0; i < n; i++) xs[i] = (i * 7919) % 10007;
        Arrays.sort(xs);
        return xs[n / 2];
    }
    public static void main(String[] args) throws Exception {
        long end = System.currentTimeMillis() + Long.parseLong(args[0]);
        long sink = 0;
        while (System.currentTimeMillis() < end) { sink += digest(2000)[0]; sink += sortWork(50000); }
        System.out.println(sink == 42 ? "!" : "done");
    }
}
