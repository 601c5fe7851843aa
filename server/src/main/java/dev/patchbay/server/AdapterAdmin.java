package dev.patchbay.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.Engine;
import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.server.http.ApiException;
import dev.patchbay.server.http.Http;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** {@code POST /v1/load_lora_adapter} and {@code /v1/unload_lora_adapter}, with vLLM's bodies and answers. */
final class AdapterAdmin {
    private final Engine engine;
    private final AdapterPaths paths;
    private final long maxBodyBytes;

    AdapterAdmin(Engine engine, AdapterPaths paths, long maxBodyBytes) {
        this.engine = engine;
        this.paths = paths;
        this.maxBodyBytes = maxBodyBytes;
    }

    void load(ServerRequest req, ServerResponse res) {
        ObjectNode body = Http.readJsonObject(req, maxBodyBytes);
        String name = body.path("lora_name").asText("");
        String path = body.path("lora_path").asText("");
        if (name.isBlank() || path.isBlank()) throw ApiException.badRequest("Both 'lora_name' and 'lora_path' must be provided.");
        if (name.equals(engine.config().servedModelName())) {
            throw ApiException.badRequest("The lora adapter '" + name + "' has the base model's name.");
        }
        try {
            Path dir = paths.confine(path);
            engine.loadAdapter(name, dir, body.path("pinned").asBoolean(false)).get(120, TimeUnit.SECONDS);
        } catch (AdapterException e) {
            throw new ApiException(e.kind() == AdapterException.Kind.NOT_FOUND ? 404 : 400, e.getMessage());
        } catch (ExecutionException e) {
            throw new ApiException(500, "Loading LoRA adapter '" + name + "' failed: " + e.getCause().getMessage());
        } catch (TimeoutException e) {
            throw new ApiException(500, "Loading LoRA adapter '" + name + "' timed out");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiException(503, "The server is shutting down");
        }
        Http.sendText(res, 200, "Success: LoRA adapter '" + name + "' added successfully.");
    }

    void unload(ServerRequest req, ServerResponse res) {
        ObjectNode body = Http.readJsonObject(req, maxBodyBytes);
        String name = body.path("lora_name").asText("");
        if (name.isBlank()) throw ApiException.badRequest("'lora_name' must be provided.");
        try {
            engine.unloadAdapter(name);
        } catch (AdapterException e) {
            throw new ApiException(404, e.getMessage());
        }
        Http.sendText(res, 200, "Success: LoRA adapter '" + name + "' removed successfully.");
    }
}
