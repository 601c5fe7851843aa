package dev.patchbay.launcher.field;

import dev.patchbay.router.pick.Endpoint;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The field's routers, each put in front of model servers the way its users run it, as one HTTP address a client (a
 * benchmark, a conformance kit) sends OpenAI requests to.
 */
public enum FieldFront {
    /** llm-d's endpoint picker with its LoRA profile, behind Envoy. */
    LLMD_LORA("llm-d epp (LoRA profile) behind Envoy", List.of("llm-d-epp", "envoy")),
    /** llm-d's endpoint picker with Patchbay's gie-lora weights, behind Envoy. */
    LLMD_GIE_LORA("llm-d epp (gie-lora weights) behind Envoy", List.of("llm-d-epp", "envoy")),
    /** llm-d's endpoint picker with the profile it runs when given none, behind Envoy. */
    LLMD_DEFAULT("llm-d epp (default profile) behind Envoy", List.of("llm-d-epp", "envoy")),
    VLLM_ROUTER_ROUND_ROBIN("vllm-router round_robin", List.of("vllm-router")),
    VLLM_ROUTER_CACHE_AWARE("vllm-router cache_aware", List.of("vllm-router")),
    /** Envoy alone: the baseline, no choice beyond the next server in turn. */
    ENVOY_ROUND_ROBIN("Envoy round robin", List.of("envoy"));

    private final String description;
    private final List<String> tools;

    FieldFront(String description, List<String> tools) {
        this.description = description;
        this.tools = tools;
    }

    public String description() {
        return description;
    }

    /** The programs it runs, by the names {@link FieldTools} finds them under. */
    public List<String> tools() {
        return tools;
    }

    /**
     * Starts this front over {@code servers} (IPv4 literals), its files and logs under {@code dir}, and returns once a
     * request sent to it would be routed by it. Fails with {@link FieldTools.MissingTool} when a program is not
     * installed.
     */
    public Running start(List<Endpoint> servers, Path dir) throws IOException, InterruptedException {
        for (String tool : tools) {
            FieldTools.require(tool); // before anything starts
        }
        return switch (this) {
            case LLMD_LORA -> behindEnvoy(LlmdPicker.start(LlmdPicker.Profile.LORA, servers, dir), dir);
            case LLMD_GIE_LORA -> behindEnvoy(LlmdPicker.start(LlmdPicker.Profile.GIE_LORA, servers, dir), dir);
            case LLMD_DEFAULT -> behindEnvoy(LlmdPicker.start(LlmdPicker.Profile.DEFAULT, servers, dir), dir);
            case VLLM_ROUTER_ROUND_ROBIN ->
                new Running(this, null, null, VllmRouter.start(VllmRouter.Policy.ROUND_ROBIN, servers, dir));
            case VLLM_ROUTER_CACHE_AWARE ->
                new Running(this, null, null, VllmRouter.start(VllmRouter.Policy.CACHE_AWARE, servers, dir));
            case ENVOY_ROUND_ROBIN -> new Running(this, null, EnvoyFront.roundRobin(servers, dir), null);
        };
    }

    private Running behindEnvoy(LlmdPicker picker, Path dir) throws IOException, InterruptedException {
        try {
            return new Running(this, picker, EnvoyFront.forPicker(picker, dir), null);
        } catch (IOException | InterruptedException | RuntimeException e) {
            picker.close();
            throw e;
        }
    }

    /** A started front: its address, its parts, and {@link #close} to stop them. */
    public static final class Running implements AutoCloseable {
        private final FieldFront kind;
        private final LlmdPicker picker;
        private final EnvoyFront envoy;
        private final VllmRouter router;

        Running(FieldFront kind, LlmdPicker picker, EnvoyFront envoy, VllmRouter router) {
            this.kind = kind;
            this.picker = picker;
            this.envoy = envoy;
            this.router = router;
        }

        public FieldFront kind() {
            return kind;
        }

        /** Where clients send requests: {@code http://127.0.0.1:<port>}. */
        public URI uri() {
            return envoy != null ? envoy.uri() : router.uri();
        }

        public int port() {
            return envoy != null ? envoy.port() : router.port();
        }

        public Optional<LlmdPicker> picker() {
            return Optional.ofNullable(picker);
        }

        public Optional<EnvoyFront> envoy() {
            return Optional.ofNullable(envoy);
        }

        public Optional<VllmRouter> router() {
            return Optional.ofNullable(router);
        }

        /** Stops Envoy first, then what it sent to. */
        @Override
        public void close() throws InterruptedException {
            try {
                if (envoy != null) {
                    envoy.close();
                }
            } finally {
                if (picker != null) {
                    picker.close();
                }
                if (router != null) {
                    router.close();
                }
            }
        }

        @Override
        public String toString() {
            return kind.description() + " on " + uri();
        }
    }
}
