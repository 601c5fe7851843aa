package dev.patchbay.engine.exec;

/** Log-softmax of a logits row, reduced to what a request asked for: the chosen token and the top N. */
public final class Logprobs {
    private Logprobs() {}

    public static TokenLogprobs of(float[] logits, int token, int top) {
        return of(logits, 0, logits.length, token, top);
    }

    /**
     * The log probabilities of {@code logits[offset .. offset + vocab)}: the chosen {@code token}'s, its rank, and
     * the {@code top} most likely tokens' (fewer if the vocabulary is smaller), ties broken by the lower id.
     */
    public static TokenLogprobs of(float[] logits, int offset, int vocab, int token, int top) {
        if (token < 0 || token >= vocab)
            throw new IllegalArgumentException("token " + token + " outside [0, " + vocab + ")");
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < vocab; i++) max = Math.max(max, logits[offset + i]);
        double sum = 0;
        for (int i = 0; i < vocab; i++) sum += Math.exp((double) logits[offset + i] - max);
        double logZ = max + Math.log(sum);

        float chosen = logits[offset + token];
        int rank = 0;
        int k = Math.min(top, vocab);
        int[] ids = new int[k];
        float[] vals = new float[k];
        int filled = 0;
        for (int i = 0; i < vocab; i++) {
            float v = logits[offset + i];
            if (v >= chosen) rank++;
            // Insertion into the sorted top list; k is small (at most --max-logprobs).
            if (k == 0 || (filled == k && v <= vals[k - 1])) continue;
            int j = filled < k ? filled++ : k - 1;
            while (j > 0 && vals[j - 1] < v) {
                vals[j] = vals[j - 1];
                ids[j] = ids[j - 1];
                j--;
            }
            vals[j] = v;
            ids[j] = i;
        }
        float[] topLogprobs = new float[k];
        for (int j = 0; j < k; j++) topLogprobs[j] = (float) (vals[j] - logZ);
        return new TokenLogprobs(token, (float) (chosen - logZ), rank, ids, topLogprobs);
    }
}
