package dev.patchbay.bench.sim;

import dev.patchbay.engine.adapter.AdapterException;
import dev.patchbay.router.pick.Endpoint;
import dev.patchbay.router.place.AdapterAdmin;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Placement's loads and unloads on the simulated engines, as a server's admin API does them: a load registers the
 * adapter and loads it, or brings a registered one into host memory; an unload ends its registration once its requests
 * are done (a later request registers it again, from storage).
 */
final class EngineAdmin implements AdapterAdmin {
    private final Map<Endpoint, Replica> replicas;
    private final Map<String, Integer> adapterIndex;

    EngineAdmin(Map<Endpoint, Replica> replicas, Map<String, Integer> adapterIndex) {
        this.replicas = replicas;
        this.adapterIndex = adapterIndex;
    }

    @Override
    public CompletableFuture<Void> load(Endpoint endpoint, String adapter, String path, boolean served) {
        Replica r = replicas.get(endpoint);
        int index = adapterIndex.get(adapter);
        try {
            CompletableFuture<?> loaded = r.registered[index]
                    ? r.core.preloadAdapter(adapter)
                    : r.core.loadAdapter(adapter, Path.of(path), false, true);
            r.registered[index] = true;
            r.wantsStep = true;
            return loaded.thenApply(a -> null);
        } catch (AdapterException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public CompletableFuture<Void> unload(Endpoint endpoint, String adapter) {
        Replica r = replicas.get(endpoint);
        int index = adapterIndex.get(adapter);
        try {
            CompletableFuture<Void> done = r.core.unloadAdapter(adapter);
            r.wantsStep = true;
            return done.thenRun(() -> r.registered[index] = false);
        } catch (AdapterException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
