package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.engine.RequestRejectedException;
import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.server.http.ApiException;
import dev.patchbay.server.http.EngineErrors;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The same adapter failure gets the same HTTP status from the OpenAI API (through the resolver directory) and from
 * the admin endpoint, because both go through {@link EngineErrors}. A load that fails only after its adapter was
 * read (weights gone meanwhile) cannot be staged without a race, so that case is checked on the shared wait.
 */
class AdapterErrorStatusTest {
    @TempDir
    Path dir;

    @Test
    void statusesByKindAndReason() {
        assertThat(EngineErrors.status(AdapterException.Kind.NOT_FOUND)).isEqualTo(404);
        assertThat(EngineErrors.status(AdapterException.Kind.INVALID)).isEqualTo(400);
        assertThat(EngineErrors.status(AdapterException.Kind.CONFLICT)).isEqualTo(400);
        assertThat(EngineErrors.status(RequestRejectedException.Reason.UNKNOWN_ADAPTER))
                .isEqualTo(404);
        assertThat(EngineErrors.status(RequestRejectedException.Reason.INVALID)).isEqualTo(400);
        assertThat(EngineErrors.status(RequestRejectedException.Reason.QUEUE_FULL))
                .isEqualTo(429);
        assertThat(EngineErrors.status(RequestRejectedException.Reason.SHUTTING_DOWN))
                .isEqualTo(503);
    }

    /** Both endpoints wait for an accepted load through the same call, so a failed load is 500 for both. */
    @Test
    void aLoadThatFailsAfterItWasAcceptedIs500() {
        CompletableFuture<Void> failed = CompletableFuture.failedFuture(new IOException("weights are missing"));
        assertThatThrownBy(() -> EngineErrors.awaitLoad("gone", failed))
                .isInstanceOfSatisfying(ApiException.class, e -> {
                    assertThat(e.status()).isEqualTo(500);
                    assertThat(e.getMessage()).isEqualTo("Loading LoRA adapter 'gone' failed: weights are missing");
                });
    }

    @Test
    void apiAndAdminAgreeOnEveryAdapterFailure() throws Exception {
        Path resolverDir = dir.resolve("resolver");
        // One copy of each defect per endpoint: a failed load leaves its name registered, so a name is tried once.
        for (String endpoint : List.of("api", "admin")) {
            Path dora = ServerHarness.writeAdapter(resolverDir, "dora-" + endpoint);
            Path config = dora.resolve("adapter_config.json");
            Files.writeString(config, Files.readString(config).replace("\"use_dora\" : false", "\"use_dora\" : true"));
            Path truncated = ServerHarness.writeAdapter(resolverDir, "truncated-" + endpoint)
                    .resolve("adapter_model.safetensors");
            Files.write(truncated, Arrays.copyOf(Files.readAllBytes(truncated), 64));
        }
        Map<String, Integer> expected = Map.of("missing", 404, "dora", 400, "truncated", 400);
        try (ServerHarness h = new ServerHarness(
                dir,
                List.of(),
                "--enable-lora",
                "--allow-runtime-lora-updating",
                "--lora-resolver-dir",
                resolverDir.toString())) {
            for (var e : expected.entrySet()) {
                String defect = e.getKey();
                HttpResponse<String> api = h.post(
                        "/v1/completions", "{\"model\":\"" + defect + "-api\",\"prompt\":\"hi\",\"max_tokens\":1}");
                HttpResponse<String> admin = h.post(
                        "/v1/load_lora_adapter",
                        "{\"lora_name\":\"" + defect + "-admin\",\"lora_path\":\""
                                + resolverDir.resolve(defect + "-admin") + "\"}");
                assertThat(api.statusCode())
                        .as(defect + " through the API: " + api.body())
                        .isEqualTo(e.getValue());
                assertThat(admin.statusCode())
                        .as(defect + " through the admin endpoint: " + admin.body())
                        .isEqualTo(e.getValue());
            }
        }
    }
}
