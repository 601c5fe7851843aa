package dev.patchbay.router.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.patchbay.router.pick.Endpoint;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class ServedModelsTest {
    static String resource(String name) throws IOException {
        try (InputStream in = ServedModelsTest.class.getResourceAsStream("/models/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void readsTheListOfLlmdInferenceSim() throws Exception {
        // v0.10.2 with --lora-modules a1 a2, then loaded-later through /v1/load_lora_adapter
        ServedModels list = ServedModels.parse(resource("inference-sim.json"));
        assertThat(list.models()).containsExactlyInAnyOrder("base", "a1", "a2", "loaded-later");
        assertThat(list.baseModels()).containsExactly("base");
        assertThat(list.known()).isTrue();
        assertThat(list.lists("loaded-later")).isTrue();
        assertThat(list.lists("a3")).isFalse();
    }

    @Test
    void everyServedNameOfLlmdInferenceSimIsABaseModel() throws Exception {
        // --served-model-name base-name alias: its pages label model_name="base-name" only
        ServedModels list = ServedModels.parse(resource("inference-sim-served-names.json"));
        assertThat(list.baseModels()).containsExactlyInAnyOrder("base-name", "alias");
        assertThat(list.models()).containsExactlyInAnyOrder("base-name", "alias", "sql");
    }

    @Test
    void anEntryWithoutAParentFieldIsABaseModel() throws Exception {
        ServedModels list = ServedModels.parse("""
                {"object":"list","data":[{"id":"base-8b","object":"model"},{"id":"alias","parent":null},
                 {"id":"sql","parent":"base-8b","root":"/adapters/sql","permission":[]}]}""");
        assertThat(list.baseModels()).containsExactlyInAnyOrder("base-8b", "alias");
        assertThat(list.models()).containsExactlyInAnyOrder("base-8b", "alias", "sql");
    }

    @Test
    void anEmptyListIsNoList() throws Exception {
        assertThat(ServedModels.parse("{\"object\":\"list\",\"data\":[]}").known())
                .isFalse();
        assertThat(ServedModels.UNKNOWN.known()).isFalse();
    }

    @Test
    void whatIsNoModelListIsAnError() {
        for (String body : new String[] {
            "",
            "[]",
            "{\"object\":\"list\"}",
            "{\"data\":{}}",
            "{\"data\":[{\"name\":\"x\"}]}",
            "{\"data\":[{\"id\":3}]}",
            "<html>not found</html>"
        }) {
            assertThatThrownBy(() -> ServedModels.parse(body)).as(body).isInstanceOf(IOException.class);
        }
    }

    @Test
    void theFetcherReadsTheListAndFailsOnAnythingElse() throws Exception {
        AtomicInteger status = new AtomicInteger(200);
        AtomicReference<String> body = new AtomicReference<>(resource("inference-sim.json"));
        CountDownLatch hold = new CountDownLatch(1);
        AtomicReference<Boolean> slow = new AtomicReference<>(false);
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
        server.createContext("/v1/models", exchange -> {
            if (slow.get()) {
                try {
                    hold.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            byte[] bytes = body.get().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status.get(), bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.start();
        try (HttpClient client = HttpClient.newHttpClient()) {
            Endpoint endpoint = new Endpoint("127.0.0.1", server.getAddress().getPort());
            // Generous where the server answers (a busy machine must not fail them); short only where it never does.
            ModelsFetcher fetcher = new ModelsFetcher(client, Duration.ofSeconds(30));
            ModelsFetcher impatient = new ModelsFetcher(client, Duration.ofMillis(300));
            assertThat(fetcher.fetch(endpoint).models()).contains("loaded-later");

            status.set(404); // a server without the path
            body.set("{\"detail\":\"Not Found\"}");
            assertThatThrownBy(() -> fetcher.fetch(endpoint))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("404");

            status.set(200);
            body.set("{\"data\": [");
            assertThatThrownBy(() -> fetcher.fetch(endpoint)).isInstanceOf(IOException.class);

            slow.set(true);
            assertThatThrownBy(() -> impatient.fetch(endpoint))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("longer than 300 ms");
            hold.countDown();

            Endpoint closed = new Endpoint("127.0.0.1", unusedPort());
            assertThatThrownBy(() -> fetcher.fetch(closed)).isInstanceOf(IOException.class);
        } finally {
            hold.countDown();
            server.stop(0);
        }
    }

    private static int unusedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
