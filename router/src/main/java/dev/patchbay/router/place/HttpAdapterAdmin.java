package dev.patchbay.router.place;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.router.pick.Endpoint;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Placement through vLLM's runtime adapter API, {@code POST /v1/load_lora_adapter} and {@code /v1/unload_lora_adapter}
 * (vLLM needs {@code VLLM_ALLOW_RUNTIME_LORA_UPDATING}, Patchbay {@code --allow-runtime-lora-updating}). A load of an
 * adapter the server serves already asks {@code load_inplace}: vLLM reloads it into its cache, Patchbay brings it into
 * host memory. An answer other than 200 fails the future with the server's text.
 */
public final class HttpAdapterAdmin implements AdapterAdmin {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient client;
    private final Duration timeout;

    public HttpAdapterAdmin(HttpClient client, Duration timeout) {
        this.client = client;
        this.timeout = timeout;
    }

    @Override
    public CompletableFuture<Void> load(Endpoint endpoint, String adapter, String path, boolean served) {
        ObjectNode body = JSON.createObjectNode().put("lora_name", adapter);
        if (path != null) body.put("lora_path", path);
        if (served) body.put("load_inplace", true);
        return post(endpoint, "/v1/load_lora_adapter", body);
    }

    @Override
    public CompletableFuture<Void> unload(Endpoint endpoint, String adapter) {
        return post(endpoint, "/v1/unload_lora_adapter", JSON.createObjectNode().put("lora_name", adapter));
    }

    private CompletableFuture<Void> post(Endpoint endpoint, String path, ObjectNode body) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://" + endpoint.address() + path))
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
                .build();
        return client.sendAsync(request, HttpResponse.BodyHandlers.ofString()).thenApply(response -> {
            if (response.statusCode() != 200) {
                throw new CompletionException(new IllegalStateException(
                        path + " on " + endpoint + " answered " + response.statusCode() + ": " + response.body()));
            }
            return null;
        });
    }
}
