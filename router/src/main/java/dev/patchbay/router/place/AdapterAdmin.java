package dev.patchbay.router.place;

import dev.patchbay.router.pick.Endpoint;
import java.util.concurrent.CompletableFuture;

/** How placement acts on a server: vLLM's runtime adapter API, or the simulator's engines. */
public interface AdapterAdmin {
    /**
     * Loads {@code adapter} on {@code endpoint} ahead of demand: registers it from {@code path}, or when the server
     * serves it already ({@code served}), brings it into memory in place. Completes when the server answered.
     */
    CompletableFuture<Void> load(Endpoint endpoint, String adapter, String path, boolean served);

    /** Unloads {@code adapter} from {@code endpoint}; completes when the server answered. */
    CompletableFuture<Void> unload(Endpoint endpoint, String adapter);
}
