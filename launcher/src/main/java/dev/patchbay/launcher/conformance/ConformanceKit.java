package dev.patchbay.launcher.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.patchbay.launcher.conformance.OpenAiCall.Answer;
import dev.patchbay.launcher.conformance.OpenAiCall.Kind;
import dev.patchbay.launcher.fleet.ServerPages;
import dev.patchbay.router.pick.Endpoint;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * Checks an endpoint picker through a real data plane: requests go to a gateway (Envoy with the picker as its
 * external processor, or any front) and the kit judges the answers as a client would and where the requests went by
 * the model servers' own counters. It needs nothing from the picker but the protocol, so it runs against any picker.
 */
public final class ConformanceKit {
    public static final String ANSWERS = "answers";
    public static final String REACHES_POOL = "reaches-pool";
    public static final String BODY_INTACT = "body-intact";
    public static final String ADAPTER_IN_SLOT = "adapter-in-slot";
    public static final String NO_READY_ENDPOINT = "no-ready-endpoint";

    private static final ObjectMapper JSON = new ObjectMapper();

    /** How long servers may take to count a request whose answer the client already has. */
    private static final Duration COUNT_SETTLE_LIMIT = Duration.ofSeconds(10);
    /** How long the data plane and the picker may take to start routing. */
    private static final Duration ROUTING_LIMIT = Duration.ofSeconds(60);
    /** How long a picker may take to notice its pool is gone (scrape failures, staleness). */
    private static final Duration UNREADY_LIMIT = Duration.ofSeconds(60);

    /**
     * What is checked.
     *
     * @param gateway   where clients send requests
     * @param servers   the model servers behind it (their /metrics are read; vLLM's metric names)
     * @param baseModel the base model's name
     * @param adapters  adapters every server can serve
     */
    public record Target(URI gateway, List<Endpoint> servers, String baseModel, List<String> adapters) {
        public Target {
            servers = List.copyOf(servers);
            adapters = List.copyOf(adapters);
        }

        /**
         * The models the first server lists on /v1/models: the one without a {@code parent} is the base model, those
         * with one its adapters (vLLM's listing).
         */
        public static Target discover(URI gateway, List<Endpoint> servers) throws IOException, InterruptedException {
            HttpClient http = HttpClient.newHttpClient();
            String listing = http.send(
                            HttpRequest.newBuilder(URI.create(
                                            "http://" + servers.getFirst().address() + "/v1/models"))
                                    .timeout(Duration.ofSeconds(10))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
            String base = null;
            List<String> adapters = new ArrayList<>();
            for (JsonNode model : JSON.readTree(listing).path("data")) {
                String parent = model.path("parent").asText("");
                if (parent.isEmpty()) {
                    base = base == null ? model.path("id").asText() : base;
                } else {
                    adapters.add(model.path("id").asText());
                }
            }
            if (base == null) {
                throw new IOException(servers.getFirst().address() + "/v1/models lists no base model: " + listing);
            }
            return new Target(gateway, servers, base, adapters);
        }

        List<String> models() {
            List<String> models = new ArrayList<>(adapters);
            models.add(0, baseModel);
            return models;
        }
    }

    /**
     * How much is sent.
     *
     * @param warmUpRounds     rounds over every model before anything is judged, so adapters find their servers
     * @param roundsPerKind    rounds over every model for each of completions and chat, streamed or not
     * @param concurrency      requests in flight at once
     * @param maxTokens        tokens each answer generates
     * @param largePromptBytes the size of the prompt that checks bodies pass whole
     */
    public record Settings(int warmUpRounds, int roundsPerKind, int concurrency, int maxTokens, int largePromptBytes) {
        public static Settings defaults() {
            return new Settings(4, 5, 6, 8, 1 << 20);
        }
    }

    /** Stops every model server, for the last check; null when the kit may not. */
    public interface PoolStopper {
        void stopAll() throws Exception;
    }

    private final HttpClient http;
    private final Settings settings;
    private final Consumer<String> progress;

    public ConformanceKit(Settings settings, Consumer<String> progress) {
        this.http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
        this.settings = settings;
        this.progress = progress;
    }

    /** Runs every check in order; the last stops the pool when {@code stopper} is given. */
    public List<CheckResult> run(Target target, PoolStopper stopper) throws Exception {
        ServerPages pages = new ServerPages(http, target.servers());
        List<CheckResult> results = new ArrayList<>();
        String notRouting = awaitRouting(target);
        if (notRouting != null) {
            results.add(CheckResult.of(ANSWERS, answersRequirement(), false, notRouting));
            return results;
        }
        progress.accept("warm-up: " + settings.warmUpRounds() + " rounds over "
                + target.models().size() + " models");
        List<Answer> warmUp = exchange(target, calls(target.models(), settings.warmUpRounds(), Kind.COMPLETION, false));
        long warmUpFailures = warmUp.stream().filter(a -> !a.ok()).count();
        if (warmUpFailures == warmUp.size()) {
            results.add(CheckResult.of(
                    ANSWERS,
                    answersRequirement(),
                    false,
                    "no warm-up request was answered: " + warmUp.getFirst().problem()));
            return results;
        }
        boolean slotCounters = pages.read().allHave("vllm:lora_cache_lookups_total");
        Counters before = Counters.read(pages, slotCounters);
        List<Answer> measured = new ArrayList<>();
        for (Kind kind : Kind.values()) {
            for (boolean stream : new boolean[] {false, true}) {
                List<OpenAiCall> calls = calls(target.models(), settings.roundsPerKind(), kind, stream);
                progress.accept("sending " + calls.size() + " "
                        + calls.getFirst().describe().replaceAll(" for .*", "") + " requests");
                measured.addAll(exchange(target, calls));
            }
        }
        results.add(answers(measured));
        long answered = measured.stream().filter(a -> a.status() == 200).count();
        results.add(reachesPool(pages, before, answered, slotCounters));
        results.add(adapterInSlot(pages, before, slotCounters, target.adapters().isEmpty()));
        results.add(bodyIntact(target));
        if (stopper != null) {
            results.add(noReadyEndpoint(target, stopper));
        } else {
            results.add(CheckResult.skipped(
                    NO_READY_ENDPOINT, noReadyRequirement(), "the kit does not own the model servers"));
        }
        return results;
    }

    /**
     * Until the gateway answers a request 200: the data plane finds its picker healthy by its own health checks, some
     * seconds after both started. Null once it does, else what it answered last.
     */
    private String awaitRouting(Target target) throws InterruptedException {
        OpenAiCall probe = new OpenAiCall(Kind.COMPLETION, target.baseModel(), false, 1, "are you there");
        long deadline = System.nanoTime() + ROUTING_LIMIT.toNanos();
        Answer last;
        do {
            last = probe.send(http, target.gateway());
            if (last.ok()) {
                return null;
            }
            Thread.sleep(100); // a poll until the data plane routes, bounded by the deadline
        } while (System.nanoTime() < deadline);
        return "the gateway answered nothing well within " + ROUTING_LIMIT.toSeconds() + " s; last: " + last.problem();
    }

    private static String answersRequirement() {
        return "Every completion and chat request, streamed or not, for the base model and every adapter, is "
                + "answered 200 with a well-formed body.";
    }

    private static String noReadyRequirement() {
        return "With no model server up, the gateway answers 503 rather than hang or fail otherwise.";
    }

    private List<OpenAiCall> calls(List<String> models, int rounds, Kind kind, boolean stream) {
        List<OpenAiCall> calls = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            for (String model : models) {
                calls.add(new OpenAiCall(
                        kind, model, stream, settings.maxTokens(), "the water people of round " + round));
            }
        }
        return calls;
    }

    private List<Answer> exchange(Target target, List<OpenAiCall> calls) throws Exception {
        try (ExecutorService pool = Executors.newFixedThreadPool(settings.concurrency())) {
            List<Future<Answer>> futures = new ArrayList<>();
            for (OpenAiCall call : calls) {
                futures.add(pool.submit(() -> call.send(http, target.gateway())));
            }
            List<Answer> answers = new ArrayList<>();
            for (Future<Answer> future : futures) {
                answers.add(future.get());
            }
            return answers;
        }
    }

    private static CheckResult answers(List<Answer> answers) {
        List<String> failures = answers.stream()
                .filter(a -> !a.ok())
                .map(a -> a.call().describe() + ": " + a.problem())
                .toList();
        String detail = (answers.size() - failures.size()) + " of " + answers.size() + " answered well";
        if (!failures.isEmpty()) {
            detail += "; first failures: " + String.join(" | ", failures.subList(0, Math.min(3, failures.size())));
        }
        return CheckResult.of(ANSWERS, answersRequirement(), failures.isEmpty(), detail);
    }

    /** The servers' own counters at one moment. */
    private record Counters(double successes, double slotLookups, double slotHits, double storageLoads) {
        static Counters read(ServerPages pages, boolean slotCounters) throws IOException, InterruptedException {
            ServerPages.Snapshot now = pages.read();
            double successes = now.total("vllm:request_success_total");
            if (!slotCounters) {
                return new Counters(successes, 0, 0, 0);
            }
            return new Counters(
                    successes,
                    now.total("vllm:lora_cache_lookups_total", "level", "gpu"),
                    now.total("vllm:lora_cache_hits_total", "level", "gpu"),
                    now.total("vllm:lora_adapter_loads_total", "source", "disk"));
        }
    }

    private static CheckResult reachesPool(ServerPages pages, Counters before, long answered, boolean slotCounters)
            throws IOException, InterruptedException {
        String requirement = "Every request the gateway answers 200 was served by a model server of the pool "
                + "(the servers' vllm:request_success_total grows by the number answered).";
        double served = 0;
        long deadline = System.nanoTime() + COUNT_SETTLE_LIMIT.toNanos();
        do {
            served = Counters.read(pages, slotCounters).successes() - before.successes();
            if (served >= answered) {
                break;
            }
            Thread.sleep(50); // servers count a request as its answer ends; a poll, bounded by the deadline
        } while (System.nanoTime() < deadline);
        return CheckResult.of(
                REACHES_POOL,
                requirement,
                served == answered,
                String.format(Locale.ROOT, "%d answered 200, the servers counted %.0f", answered, served));
    }

    private static CheckResult adapterInSlot(ServerPages pages, Counters before, boolean slotCounters, boolean none)
            throws IOException, InterruptedException {
        String requirement = "After warm-up, with every adapter fitting in the pool's batch slots, every adapter "
                + "request reaches a server that holds its adapter in a slot (the servers' own slot hit counters).";
        if (none) {
            return CheckResult.skipped(ADAPTER_IN_SLOT, requirement, "no adapters to check");
        }
        if (!slotCounters) {
            return CheckResult.skipped(
                    ADAPTER_IN_SLOT,
                    requirement,
                    "the servers do not count slot hits (vllm:lora_cache_lookups_total{level=\"gpu\"})");
        }
        Counters after = Counters.read(pages, true);
        double lookups = after.slotLookups() - before.slotLookups();
        double hits = after.slotHits() - before.slotHits();
        double loads = after.storageLoads() - before.storageLoads();
        return CheckResult.of(
                ADAPTER_IN_SLOT,
                requirement,
                lookups > 0 && hits == lookups,
                String.format(
                        Locale.ROOT,
                        "%.0f of %.0f adapter requests found their adapter in a slot (%.1f%%); %.0f loads from storage",
                        hits,
                        lookups,
                        lookups == 0 ? 0 : 100 * hits / lookups,
                        loads));
    }

    private CheckResult bodyIntact(Target target) throws InterruptedException {
        String requirement = "A " + (settings.largePromptBytes() >> 10) + " KiB request body reaches the server whole "
                + "through the picker: the answer through the gateway is the server's own answer to that body.";
        OpenAiCall large = new OpenAiCall(
                Kind.COMPLETION, target.baseModel(), false, 1, "word ".repeat(settings.largePromptBytes() / 5));
        Answer direct = large.send(
                http, URI.create("http://" + target.servers().getFirst().address() + "/"));
        Answer routed = large.send(http, target.gateway());
        String directView = view(direct);
        String routedView = view(routed);
        return CheckResult.of(
                BODY_INTACT,
                requirement,
                directView.equals(routedView),
                "server directly: " + directView + "; through the gateway: " + routedView);
    }

    /** What an answer to the large body says about the body the server read: its size in tokens. */
    private static String view(Answer answer) {
        if (answer.status() == 200) {
            return "200, " + answer.promptTokens() + " prompt tokens";
        }
        String tokens = answer.body().replaceAll("[^0-9]+", " ").trim();
        return answer.status() + " (numbers in the error: " + tokens + ")";
    }

    private CheckResult noReadyEndpoint(Target target, PoolStopper stopper) throws Exception {
        stopper.stopAll();
        OpenAiCall probe = new OpenAiCall(Kind.COMPLETION, target.baseModel(), false, 1, "anyone there");
        long started = System.nanoTime();
        long deadline = started + UNREADY_LIMIT.toNanos();
        List<Integer> statuses = new ArrayList<>();
        while (System.nanoTime() < deadline) {
            Answer answer = probe.send(http, target.gateway());
            if (statuses.isEmpty() || statuses.getLast() != answer.status()) {
                statuses.add(answer.status());
            }
            if (answer.status() == 503) {
                return CheckResult.pass(
                        NO_READY_ENDPOINT,
                        noReadyRequirement(),
                        String.format(
                                Locale.ROOT,
                                "503 after %.1f s (statuses seen in order: %s)",
                                (System.nanoTime() - started) / 1e9,
                                statuses));
            }
            Thread.sleep(100); // a poll until the picker notices, bounded by the deadline
        }
        return CheckResult.of(
                NO_READY_ENDPOINT,
                noReadyRequirement(),
                false,
                "no 503 within " + UNREADY_LIMIT.toSeconds() + " s; statuses seen in order: " + statuses);
    }
}
