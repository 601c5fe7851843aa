package dev.patchbay.router.proxy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.patchbay.testkit.Await;
import dev.patchbay.testkit.HttpAnswers;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stand-in model server on loopback: serves the metrics page the test sets, and answers
 * completions (streamed as SSE when asked) saying which server answered.
 */
public final class FakeModelServer implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    final String name;
    private final int port;
    private volatile HttpServer server;
    public volatile String metricsPage;
    /** Streaming answers wait on this after their first event, when set. */
    volatile CountDownLatch streamGate;
    /** Completions wait on this before sending anything, when set (a server busy with other prefills). */
    volatile CountDownLatch answerGate;
    /** Metrics pages wait on this before sending anything, when set (a host too busy to answer scrapes in time). */
    public volatile CountDownLatch metricsGate;
    /** Completions are read, counted, then the connection is dropped unanswered (a server dying mid-request). */
    volatile boolean hangUpOnCompletions;

    /** Completions that ask for a slot (x-patchbay-require-slot) are refused for want of one, as a full server does. */
    volatile boolean refuseSlotRequests;
    /** When set, the page after a refusal: the server's page catches up with the request that took the slot. */
    volatile String pageAfterRefusal;
    /** Whether each completion asked for a slot, in order. */
    final List<Boolean> askedForSlot = new CopyOnWriteArrayList<>();

    final List<String> models = new CopyOnWriteArrayList<>();
    /** What /v1/models lists: the first the base model, the others its adapters; none by default (no list). */
    volatile List<String> listed = List.of();

    final List<String> metricsQueries = new CopyOnWriteArrayList<>();
    final AtomicInteger completions = new AtomicInteger();

    public FakeModelServer(String name, String metricsPage) throws IOException {
        this(name, metricsPage, 0);
    }

    private FakeModelServer(String name, String metricsPage, int port) throws IOException {
        this.name = name;
        this.metricsPage = metricsPage;
        this.server = bind(port);
        this.port = server.getAddress().getPort();
    }

    public String address() {
        return "127.0.0.1:" + port;
    }

    int port() {
        return port;
    }

    private HttpServer bind(int wantedPort) throws IOException {
        // Reviving on the same port can find it still held for a moment: wait until it binds.
        HttpServer[] bound = new HttpServer[1];
        Await.until("port " + wantedPort + " free to bind", () -> {
            try {
                bound[0] = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), wantedPort), 64);
                return true;
            } catch (BindException e) {
                return false;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        HttpServer http = bound[0];
        http.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        http.createContext("/metrics", this::metrics);
        http.createContext("/v1/completions", this::completion);
        http.createContext("/v1/chat/completions", this::completion);
        http.createContext("/v1/models", this::modelsList);
        http.start();
        return http;
    }

    /** Stops listening and drops every connection, like a killed process. */
    public void kill() {
        server.stop(0);
    }

    /** Listens again on the same port. */
    void revive() throws IOException {
        server = bind(port);
    }

    @Override
    public void close() {
        server.stop(0);
    }

    private void metrics(HttpExchange exchange) throws IOException {
        metricsQueries.add(exchange.getRequestURI().getRawQuery());
        CountDownLatch gate = metricsGate;
        if (gate != null) {
            awaitQuietly(gate);
        }
        HttpAnswers.send(exchange, 200, "text/plain; version=0.0.4", metricsPage);
    }

    private void modelsList(HttpExchange exchange) throws IOException {
        List<String> names = listed;
        StringBuilder data = new StringBuilder();
        for (String model : names) {
            data.append(data.isEmpty() ? "" : ",")
                    .append("{\"id\":\"")
                    .append(model)
                    .append("\",\"parent\":")
                    .append(model.equals(names.getFirst()) ? "null" : "\"" + names.getFirst() + "\"")
                    .append('}');
        }
        HttpAnswers.send(
                exchange,
                200,
                "application/json",
                "{\"object\":\"list\",\"data\":[" + data + "],\"served_by\":\"" + name + "\"}");
    }

    private void completion(HttpExchange exchange) throws IOException {
        JsonNode body = JSON.readTree(exchange.getRequestBody().readAllBytes());
        String model = body.path("model").asText();
        boolean slot = "true".equals(exchange.getRequestHeaders().getFirst("x-patchbay-require-slot"));
        askedForSlot.add(slot);
        if (slot && refuseSlotRequests) {
            if (pageAfterRefusal != null) metricsPage = pageAfterRefusal;
            exchange.getResponseHeaders().add("X-Patchbay-Slot-Refused", "true");
            HttpAnswers.send(exchange, 503, "application/json", "{\"error\":{\"message\":\"no slot\",\"code\":503}}");
            return;
        }
        models.add(model);
        completions.incrementAndGet();
        if (hangUpOnCompletions) {
            exchange.close(); // before any response header: the JDK server drops the connection
            return;
        }
        CountDownLatch before = answerGate;
        if (before != null) {
            awaitQuietly(before);
        }
        if (!body.path("stream").asBoolean(false)) {
            HttpAnswers.send(
                    exchange,
                    200,
                    "application/json",
                    "{\"object\":\"text_completion\",\"model\":\"" + model + "\",\"served_by\":\"" + name + "\"}");
            return;
        }
        exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
        exchange.sendResponseHeaders(200, 0);
        try (OutputStream out = exchange.getResponseBody()) {
            for (int i = 0; i < 3; i++) {
                out.write(("data: {\"index\":" + i + ",\"served_by\":\"" + name + "\"}\n\n")
                        .getBytes(StandardCharsets.UTF_8));
                out.flush();
                CountDownLatch gate = streamGate;
                if (i == 0 && gate != null) {
                    awaitQuietly(gate);
                }
            }
            out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void awaitQuietly(CountDownLatch gate) {
        try {
            gate.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A Patchbay-style page whose four slots are each held by another adapter ({@code prefix}1 to 4) with a request running. */
    public static String allSlotsBusy(String prefix) {
        String[] adapters = {prefix + "1", prefix + "2", prefix + "3", prefix + "4"};
        StringBuilder page = new StringBuilder(page(0, 0.1, adapters));
        for (String adapter : adapters) {
            page.append("vllm:num_lora_requests_running{engine=\"0\",lora_name=\"")
                    .append(adapter)
                    .append("\",model_name=\"base\"} 1\n");
        }
        return page.toString();
    }

    /** A Patchbay-style page: load, KV use, and the adapters in slots (all idle, 4 slots). */
    public static String page(int waiting, double kvUsage, String... adaptersInSlots) {
        StringBuilder page = new StringBuilder();
        page.append("# TYPE vllm:num_requests_waiting gauge\n")
                .append("vllm:num_requests_waiting{engine=\"0\",model_name=\"base\"} ")
                .append(waiting)
                .append('\n')
                .append("vllm:num_requests_running{engine=\"0\",model_name=\"base\"} 0\n")
                .append("vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"base\"} ")
                .append(kvUsage)
                .append('\n')
                .append("vllm:max_gpu_lora_adapters{engine=\"0\",model_name=\"base\"} 4\n")
                .append("vllm:num_gpu_loaded_lora_adapters{engine=\"0\",model_name=\"base\"} ")
                .append(adaptersInSlots.length)
                .append('\n');
        for (String adapter : adaptersInSlots) {
            page.append("vllm:lora_adapter_loaded{engine=\"0\",level=\"gpu\",lora_name=\"")
                    .append(adapter)
                    .append("\",model_name=\"base\",pinned=\"false\",rank=\"8\"} 1\n");
        }
        return page.toString();
    }
}
