package dev.patchbay.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.patchbay.engine.Engine;
import dev.patchbay.engine.ModelTarget;
import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.engine.adapter.RegisteredAdapter;
import dev.patchbay.server.http.ApiException;
import dev.patchbay.server.http.EngineErrors;
import dev.patchbay.server.http.Http;
import dev.patchbay.server.http.JsonFields;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.util.concurrent.CompletableFuture;

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
        String name = JsonFields.string(body.get("lora_name"), "lora_name");
        String path = JsonFields.string(body.get("lora_path"), "lora_path");
        boolean pinned = JsonFields.bool(body.get("pinned"), "pinned", false);
        // vLLM reloads a loaded adapter's weights in place; here the weights of a name never change, so it brings the
        // adapter into host memory ahead of demand (a placement controller's preload), and answers once it is there.
        boolean inPlace = JsonFields.bool(body.get("load_inplace"), "load_inplace", false);
        if (name == null || name.isBlank() || path == null || path.isBlank()) {
            throw ApiException.badRequest("Both 'lora_name' and 'lora_path' must be provided.");
        }
        if (engine.resolve(name) == ModelTarget.BASE_MODEL) {
            throw ApiException.badRequest("The lora adapter '" + name + "' has the base model's name.");
        }
        CompletableFuture<?> load;
        try {
            RegisteredAdapter registered = inPlace ? engine.core().adapter(name) : null;
            if (registered != null && !registered.spec().path().equals(paths.confine(path))) {
                throw ApiException.badRequest("The lora adapter '" + name + "' is loaded from "
                        + registered.spec().path() + "; load_inplace cannot change its path.");
            }
            load = registered != null
                    ? engine.preloadAdapter(name)
                    : engine.loadAdapter(name, paths.confine(path), pinned);
        } catch (AdapterException e) {
            throw EngineErrors.of(e);
        }
        EngineErrors.awaitLoad(name, load);
        Http.sendText(res, 200, "Success: LoRA adapter '" + name + "' added successfully.");
    }

    void unload(ServerRequest req, ServerResponse res) {
        ObjectNode body = Http.readJsonObject(req, maxBodyBytes);
        String name = JsonFields.string(body.get("lora_name"), "lora_name");
        JsonFields.integer(body.get("lora_int_id"), "lora_int_id"); // vLLM's optional id; names identify adapters here
        if (name == null || name.isBlank()) throw ApiException.badRequest("'lora_name' must be provided.");
        try {
            engine.unloadAdapter(name);
        } catch (AdapterException e) {
            throw EngineErrors.of(e);
        }
        Http.sendText(res, 200, "Success: LoRA adapter '" + name + "' removed successfully.");
    }
}
