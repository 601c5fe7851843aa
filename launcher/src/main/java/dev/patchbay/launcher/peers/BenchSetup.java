package dev.patchbay.launcher.peers;

import dev.patchbay.launcher.field.EnvoyFront;
import dev.patchbay.launcher.field.FieldFront;
import dev.patchbay.launcher.field.FieldTools;
import dev.patchbay.launcher.fleet.PatchbayRoute;
import dev.patchbay.launcher.gateway.EnvoyConfig;
import dev.patchbay.launcher.gateway.GatewayCommand;
import dev.patchbay.router.pick.Endpoint;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;

/** One way of putting routing in front of the same model servers, as its users run it. */
public enum BenchSetup {
    PATCHBAY_PICKER("patchbay-picker", "Envoy + Patchbay's picker (profile patchbay)", null),
    GIE_LORA_PICKER("gie-lora-picker", "Envoy + Patchbay's picker (profile gie-lora)", null),
    PATCHBAY_PROXY("patchbay-proxy", "Patchbay's reverse proxy (profile patchbay)", null),
    LLMD_LORA("llm-d-lora", "Envoy + llm-d epp (LoRA profile)", FieldFront.LLMD_LORA),
    LLMD_GIE_LORA("llm-d-gie-lora", "Envoy + llm-d epp (gie-lora weights)", FieldFront.LLMD_GIE_LORA),
    LLMD_DEFAULT("llm-d-default", "Envoy + llm-d epp (default profile)", FieldFront.LLMD_DEFAULT),
    VLLM_ROUTER_ROUND_ROBIN("vllm-router-rr", "vllm-router round_robin", FieldFront.VLLM_ROUTER_ROUND_ROBIN),
    VLLM_ROUTER_CACHE_AWARE("vllm-router-cache-aware", "vllm-router cache_aware", FieldFront.VLLM_ROUTER_CACHE_AWARE),
    ENVOY_ROUND_ROBIN("envoy-rr", "Envoy alone, round robin", FieldFront.ENVOY_ROUND_ROBIN);

    /** A started front: where clients send requests. */
    public interface Front extends AutoCloseable {
        URI uri();

        /**
         * Requests Envoy sent again after a server refused them for want of a slot, since the front started
         * ({@code cluster.pool.upstream_rq_retry}); empty for a front without Patchbay's picker behind Envoy.
         */
        default OptionalLong slotRetries() throws IOException, InterruptedException {
            return OptionalLong.empty();
        }

        @Override
        void close() throws InterruptedException;
    }

    private final String id;
    private final String description;
    private final FieldFront field;

    BenchSetup(String id, String description, FieldFront field) {
        this.id = id;
        this.description = description;
        this.field = field;
    }

    public String id() {
        return id;
    }

    public String description() {
        return description;
    }

    /** Whether it chooses servers by where adapters are (what the LoRA targets compare). */
    public boolean loraAware() {
        return this == PATCHBAY_PICKER
                || this == GIE_LORA_PICKER
                || this == PATCHBAY_PROXY
                || this == LLMD_LORA
                || this == LLMD_GIE_LORA;
    }

    public static BenchSetup byId(String id) {
        for (BenchSetup setup : values()) {
            if (setup.id.equals(id)) {
                return setup;
            }
        }
        throw new IllegalArgumentException("unknown setup '" + id + "'; known: "
                + String.join(", ", Arrays.stream(values()).map(BenchSetup::id).toList()));
    }

    /**
     * How Patchbay's picker setups run the picker: {@code replicas} processes behind the one Envoy, which spreads
     * requests over them round robin, each naming {@code fallbacks} endpoints after its first choice.
     */
    public record Pickers(int replicas, int fallbacks) {
        /** As {@code patchbay gateway} runs it: one picker, its default fallbacks. */
        public static final Pickers GATEWAY = new Pickers(1, GatewayCommand.DEFAULT_FALLBACKS);

        public Pickers {
            if (replicas < 1) {
                throw new IllegalArgumentException("--pickers must be 1 or more, got " + replicas);
            }
        }
    }

    /** Starts this front over {@code servers}, its files and logs under {@code dir}. */
    public Front start(List<Endpoint> servers, Path dir) throws IOException, InterruptedException {
        return start(servers, dir, List.of(), Pickers.GATEWAY);
    }

    /**
     * As {@link #start(List, Path)}, with {@code routeArgs} added to Patchbay's route command line (such as {@code
     * --placement on}) and Patchbay's pickers run as {@code pickers} says; the field's fronts take neither and ignore
     * them.
     */
    public Front start(List<Endpoint> servers, Path dir, List<String> routeArgs, Pickers pickers)
            throws IOException, InterruptedException {
        if (field != null) {
            FieldFront.Running running = field.start(servers, dir);
            return front(running.uri(), running::close);
        }
        String profile = this == GIE_LORA_PICKER ? "gie-lora" : "patchbay";
        if (this == PATCHBAY_PROXY) {
            PatchbayRoute route = PatchbayRoute.start(servers, profile, null, false, routeArgs, dir.resolve("route"));
            return front(route.uri(), route::close);
        }
        List<String> args = new ArrayList<>(routeArgs);
        args.addAll(List.of("--ext-proc-fallbacks", Integer.toString(pickers.fallbacks())));
        List<PatchbayRoute> routes = new ArrayList<>();
        Runnable closeRoutes = () -> routes.forEach(PatchbayRoute::close);
        EnvoyFront envoy;
        try {
            for (int i = 0; i < pickers.replicas(); i++) {
                Path routeDir = dir.resolve(pickers.replicas() == 1 ? "route" : "route-" + i);
                routes.add(PatchbayRoute.start(servers, profile, null, true, args, routeDir));
            }
            envoy = EnvoyFront.forPickers(
                    FieldTools.require("envoy"),
                    routes.stream()
                            .map(r -> new EnvoyConfig.Picker(r.extProc(), r.healthPort()))
                            .toList(),
                    servers,
                    dir,
                    routes.stream().map(PatchbayRoute::process).toList());
        } catch (IOException | InterruptedException | RuntimeException e) {
            closeRoutes.run();
            throw e;
        }
        return new Front() {
            @Override
            public URI uri() {
                return envoy.uri();
            }

            @Override
            public OptionalLong slotRetries() throws IOException, InterruptedException {
                // The shipped route retries on a slot refusal only.
                return OptionalLong.of(envoy.process().counter("cluster.pool.upstream_rq_retry"));
            }

            @Override
            public void close() throws InterruptedException {
                try {
                    envoy.close();
                } finally {
                    closeRoutes.run();
                }
            }
        };
    }

    /** What {@code close} stops. */
    private interface Closer {
        void close() throws InterruptedException;
    }

    private static Front front(URI uri, Closer closer) {
        return new Front() {
            @Override
            public URI uri() {
                return uri;
            }

            @Override
            public void close() throws InterruptedException {
                closer.close();
            }
        };
    }
}
