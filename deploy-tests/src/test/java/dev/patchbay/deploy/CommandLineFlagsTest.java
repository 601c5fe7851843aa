package dev.patchbay.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.patchbay.router.RouteCommand;
import dev.patchbay.router.Router;
import dev.patchbay.server.ServeCommand;
import dev.patchbay.server.ServerOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

/** Every argument the manifests give `patchbay serve` and `patchbay route` is one the command accepts. */
class CommandLineFlagsTest {
    @TempDir
    Path dir;

    static List<Cases.Case> cases() {
        return Cases.all();
    }

    static List<Cases.Case> routerCases() {
        return List.of(Cases.DEFAULTS, Cases.ROUTER_PROXY, Cases.GATEWAY_PICKER, Cases.EVERYTHING);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void serverArgsAreFlagsServeAccepts(Cases.Case c) throws Exception {
        Manifests m = Manifests.check(Tools.helmTemplate(c.helmArgs()));
        JsonNode server = Manifests.container(m.one("Deployment", "patchbay-server"), "server");
        List<String> args = Manifests.strings(server.path("args"));
        assertThat(args.getFirst()).isEqualTo("serve");
        ServerOptions options = ServeCommand.parse(args.subList(1, args.size()).toArray(String[]::new));
        assertThat(options.enableLora()).isTrue();
        assertThat(options.loraResolverDir()).isEqualTo(Path.of(mountPath(server, "adapters")));
        assertThat(options.port())
                .isEqualTo(server.path("ports").get(0).path("containerPort").asInt());
        assertThat(Manifests.env(server)).containsEntry("VLLM_ALLOW_RUNTIME_LORA_UPDATING", "true");
    }

    @Test
    void everythingCaseReachesTheServerAsWritten() throws Exception {
        Manifests m = Manifests.check(Tools.helmTemplate(Cases.EVERYTHING.helmArgs()));
        List<String> args = Manifests.strings(Manifests.container(m.one("Deployment", "patchbay-server"), "server")
                .path("args"));
        ServerOptions o = ServeCommand.parse(args.subList(1, args.size()).toArray(String[]::new));
        assertThat(o.maxLoras()).isEqualTo(2);
        assertThat(o.maxCpuLoras()).isEqualTo(4);
        assertThat(o.maxLoraRank()).isEqualTo(32);
        assertThat(o.servedModelName()).isEqualTo("base");
        assertThat(o.loraModules()).extracting(ServerOptions.LoraModule::name).containsExactly("sql-lora", "chat-lora");
        assertThat(o.loraAllowedDirs()).containsExactly(Path.of("/extra-adapters"));
        assertThat(o.enableLoraLatencyMetrics()).isTrue();
        assertThat(o.maxLoraMetricSeries()).isEqualTo(200);
        assertThat(o.demoAdapters()).isZero();
    }

    /**
     * The router's arguments parse, and the router builds from them with the ConfigMap's files where the pod
     * mounts them: its router.json and profile files are read and checked as at a pod's start.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("routerCases")
    void routerArgsAreFlagsRouteAcceptsAndItsConfigurationLoads(Cases.Case c) throws Exception {
        Manifests m = Manifests.check(Tools.helmTemplate(c.helmArgs()));
        JsonNode deployment = m.one("Deployment", "patchbay-router");
        JsonNode router = Manifests.container(deployment, "router");
        Path configDir = dir.resolve("config");
        Files.createDirectories(configDir);
        m.one("ConfigMap", "patchbay-router")
                .path("data")
                .properties()
                .forEach(e -> write(configDir.resolve(e.getKey()), e.getValue().asText()));
        Path poolDir = Files.createDirectories(dir.resolve("pool"));
        Map<String, Path> mounts = Map.of(mountPath(router, "config"), configDir, mountPath(router, "pool"), poolDir);

        List<String> args = new ArrayList<>();
        for (String a : Manifests.strings(router.path("args"))) {
            String arg = a;
            for (var mount : mounts.entrySet()) {
                if (a.startsWith(mount.getKey() + "/"))
                    arg = mount.getValue() + a.substring(mount.getKey().length());
            }
            args.add(arg);
        }
        assertThat(args.getFirst()).isEqualTo("route");
        RouteCommand command = new RouteCommand();
        new CommandLine(command).parseArgs(args.subList(1, args.size()).toArray(String[]::new));
        try (Router built = command.createRouter()) {
            String profile = m.one("ConfigMap", "patchbay-router")
                    .path("data")
                    .path("router.json")
                    .asText();
            assertThat(profile).contains("\"profile\": \"" + built.picker().name() + "\"");
        }
    }

    /** The checks above must be able to fail: a flag the commands do not know is refused. */
    @Test
    void flagsTheCommandsDoNotKnowAreRefused() {
        assertThatThrownBy(() -> ServeCommand.parse("--enable-lora", "--max-lora", "4"))
                .hasMessageContaining("--max-lora");
        assertThatThrownBy(() -> ServeCommand.parse("--model", "/models/base", "--lora-modules", "a=/x"))
                .hasMessageContaining("--enable-lora");
        assertThatThrownBy(() -> new CommandLine(new RouteCommand())
                        .parseArgs("--endpoints", "a:1", "--health-probe-port", "9003"))
                .hasMessageContaining("--health-probe-port");
    }

    private static String mountPath(JsonNode container, String volume) {
        for (JsonNode m : container.path("volumeMounts")) {
            if (m.path("name").asText().equals(volume))
                return m.path("mountPath").asText();
        }
        throw new AssertionError("no mount of " + volume);
    }

    private static void write(Path file, String content) {
        try {
            Files.writeString(file, content);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
