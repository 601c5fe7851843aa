package dev.patchbay.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** The legacy gauge is deprecated in 0.1: shown with a notice in 0.1, hidden in 0.2 unless asked for, gone in 0.3. */
class DeprecationTest {
    private static String page(String version, String... flags) throws Exception {
        String[] args = new String[flags.length + 8];
        System.arraycopy(
                new String[] {
                    "--host", "127.0.0.1", "--port", "0", "--demo-adapters", "0", "--enable-lora", "--model=sim:old"
                },
                0,
                args,
                0,
                8);
        System.arraycopy(flags, 0, args, 8, flags.length);
        ServerOptions o = ServeCommand.parse(args);
        PatchbayServer s = PatchbayServer.start(version == null ? o : o.withPatchbayVersion(version));
        try {
            return HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + "/metrics"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
        } finally {
            s.stop();
        }
    }

    @Test
    void legacyGaugeFollowsTheLifecycle() throws Exception {
        String current = page(null);
        assertThat(current).contains("vllm:lora_requests_info{");
        assertThat(current).containsPattern("# HELP vllm:lora_requests_info .*DEPRECATED: use .* instead\\.");

        assertThat(page("0.2.0")).doesNotContain("vllm:lora_requests_info");
        assertThat(page("0.2.0", "--show-hidden-metrics-for-version", "0.1")).contains("vllm:lora_requests_info{");
        assertThat(page("0.2.0", "--show-hidden-metrics-for-version", "0.0")).doesNotContain("vllm:lora_requests_info");
        assertThat(page("0.3.0", "--show-hidden-metrics-for-version", "0.1")).doesNotContain("vllm:lora_requests_info");
        // The replacements are there in every version.
        assertThat(page("0.3.0")).contains("vllm:lora_config_info").contains("vllm:max_gpu_lora_adapters");
    }
}
