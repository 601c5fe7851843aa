package dev.patchbay.launcher.placement;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * An open-loop request stream: Poisson arrivals at a fixed rate, each a streamed completion for an adapter drawn by
 * weight, sent on a virtual thread of its own whether or not earlier requests have finished (a closed loop would slow
 * down with the servers and hide their queues). Arrival times and adapters come from a seed alone, so every setup gets
 * the same stream.
 */
final class OpenLoopLoad implements AutoCloseable {
    private static final Duration REQUEST_LIMIT = Duration.ofSeconds(120);

    /**
     * One request: its phase, adapter, the server the router sent it to (its {@code x-gateway-destination-endpoint}
     * answer header; null without one), HTTP status (0: no answer), time to first token (ms), and why it failed
     * (null: it did not).
     */
    record Outcome(String phase, String adapter, String server, int status, double ttftMs, String failure) {
        boolean failed() {
            return failure != null;
        }
    }

    /** The header Patchbay's proxy names the chosen server in. */
    static final String DESTINATION_HEADER = "x-gateway-destination-endpoint";

    private final HttpClient http;
    private final URI completions;
    private final int maxTokens;
    private final ExecutorService senders = Executors.newVirtualThreadPerTaskExecutor();
    private final List<Future<Outcome>> sent = new ArrayList<>();

    OpenLoopLoad(URI front, int maxTokens) {
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .executor(senders)
                .build();
        this.completions = front.resolve("/v1/completions");
        this.maxTokens = maxTokens;
    }

    /**
     * Sends one phase's arrivals for {@code duration} and returns when the last has been sent, not answered: the next
     * phase's stream follows without a gap.
     */
    void send(String phase, double rate, List<String> adapters, double[] weights, Duration duration, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        long start = System.nanoTime();
        long end = start + duration.toNanos();
        long next = start;
        while (true) {
            next += (long) (-Math.log(1 - random.nextDouble()) / rate * 1e9);
            if (next >= end) {
                break;
            }
            String adapter = draw(random, adapters, weights);
            LockSupport.parkNanos(next - System.nanoTime());
            synchronized (sent) {
                sent.add(senders.submit(() -> request(phase, adapter)));
            }
        }
        LockSupport.parkNanos(end - System.nanoTime());
    }

    /** Waits for every request sent so far and returns their outcomes in the order sent. */
    List<Outcome> finish() throws InterruptedException {
        List<Outcome> outcomes = new ArrayList<>();
        synchronized (sent) {
            for (Future<Outcome> f : sent) {
                try {
                    outcomes.add(f.get(REQUEST_LIMIT.toSeconds() + 10, TimeUnit.SECONDS));
                } catch (Exception e) {
                    outcomes.add(new Outcome("?", "?", null, 0, Double.NaN, "no outcome: " + e));
                }
            }
        }
        return outcomes;
    }

    static String draw(SplittableRandom random, List<String> adapters, double[] weights) {
        double total = 0;
        for (double w : weights) {
            total += w;
        }
        double u = random.nextDouble() * total;
        for (int i = 0; i < weights.length; i++) {
            u -= weights[i];
            if (u < 0) {
                return adapters.get(i);
            }
        }
        return adapters.getLast();
    }

    private Outcome request(String phase, String adapter) {
        String body = "{\"model\":\"" + adapter + "\",\"prompt\":\"the water cycle moves water\",\"max_tokens\":"
                + maxTokens + ",\"ignore_eos\":true,\"stream\":true}";
        long sentAt = System.nanoTime();
        try {
            HttpResponse<InputStream> answer = http.send(
                    HttpRequest.newBuilder(completions)
                            .timeout(REQUEST_LIMIT)
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            double ttft = Double.NaN;
            boolean done = false;
            try (BufferedReader lines =
                    new BufferedReader(new InputStreamReader(answer.body(), StandardCharsets.UTF_8))) {
                for (String line; (line = lines.readLine()) != null; ) {
                    if (!line.startsWith("data:")) {
                        continue;
                    }
                    if (line.contains("[DONE]")) {
                        done = true;
                    } else if (Double.isNaN(ttft)) {
                        ttft = (System.nanoTime() - sentAt) / 1e6;
                    }
                }
            }
            // A stream that ends without [DONE] was cut off: it counts as failed, as a client would see it.
            String failure = answer.statusCode() != 200
                    ? "HTTP " + answer.statusCode()
                    : done ? null : "stream ended without [DONE]";
            String server = answer.headers().firstValue(DESTINATION_HEADER).orElse(null);
            return new Outcome(phase, adapter, server, answer.statusCode(), ttft, failure);
        } catch (Exception e) {
            return new Outcome(
                    phase, adapter, null, 0, Double.NaN, e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    @Override
    public void close() {
        senders.shutdownNow();
        http.close();
    }
}
