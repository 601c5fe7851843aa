package dev.patchbay.launcher.peers;

import dev.patchbay.launcher.field.EnvoyFront;
import dev.patchbay.launcher.field.FieldFront;
import dev.patchbay.launcher.field.FieldTools;
import dev.patchbay.launcher.fleet.PatchbayRoute;
import dev.patchbay.launcher.gateway.GatewayCommand;
import dev.patchbay.router.pick.Endpoint;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

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

    /** Starts this front over {@code servers}, its files and logs under {@code dir}. */
    public Front start(List<Endpoint> servers, Path dir) throws IOException, InterruptedException {
        return start(servers, dir, List.of());
    }

    /**
     * As {@link #start(List, Path)}, with {@code routeArgs} added to Patchbay's route command line (such as {@code
     * --placement on}); the field's fronts take no such flags and ignore them.
     */
    public Front start(List<Endpoint> servers, Path dir, List<String> routeArgs)
            throws IOException, InterruptedException {
        if (field != null) {
            FieldFront.Running running = field.start(servers, dir);
            return new Front() {
                @Override
                public URI uri() {
                    return running.uri();
                }

                @Override
                public void close() throws InterruptedException {
                    running.close();
                }
            };
        }
        String profile = this == GIE_LORA_PICKER ? "gie-lora" : "patchbay";
        boolean picker = this != PATCHBAY_PROXY;
        List<String> args = new ArrayList<>(routeArgs);
        if (picker) {
            // Behind the shipped Envoy, as `patchbay gateway` runs the picker.
            args.addAll(List.of("--ext-proc-fallbacks", Integer.toString(GatewayCommand.DEFAULT_FALLBACKS)));
        }
        PatchbayRoute route = PatchbayRoute.start(servers, profile, null, picker, args, dir.resolve("route"));
        if (!picker) {
            return new Front() {
                @Override
                public URI uri() {
                    return route.uri();
                }

                @Override
                public void close() {
                    route.close();
                }
            };
        }
        EnvoyFront envoy;
        try {
            envoy = EnvoyFront.forPicker(
                    FieldTools.require("envoy"), route.extProc(), route.healthPort(), servers, dir, route.process());
        } catch (IOException | InterruptedException | RuntimeException e) {
            route.close();
            throw e;
        }
        return new Front() {
            @Override
            public URI uri() {
                return envoy.uri();
            }

            @Override
            public void close() throws InterruptedException {
                try {
                    envoy.close();
                } finally {
                    route.close();
                }
            }
        };
    }
}
