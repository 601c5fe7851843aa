package dev.patchbay.router.pick.profile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.patchbay.router.pick.EndpointPicker;
import dev.patchbay.router.pick.PickerShape;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ProfileFileTest {
    private static final String HEAD = """
            {"apiVersion": "inference.networking.x-k8s.io/v1alpha1", "kind": "EndpointPickerConfig",
            """;

    /** A file of {@code plugins} and one profile "mine" whose plugin list is {@code refs}. */
    private static String file(String plugins, String refs) {
        return HEAD + "\"plugins\": [" + plugins + "],\n"
                + "\"schedulingProfiles\": [{\"name\": \"mine\", \"plugins\": [" + refs + "]}]}";
    }

    private static ProfileFile parse(String json) {
        return ProfileFile.parse("mine.json", json);
    }

    private static EndpointPicker picker(ProfileFile file, String name) {
        return file.profile(name).create(new Random(1), System::nanoTime);
    }

    @Test
    void theReadmeExampleIsAValidFile() throws IOException {
        // router/README.md's example, so the documented format cannot drift from what the router reads.
        String readme = Files.readString(Path.of("README.md"));
        int marker = readme.indexOf("<!-- profile-file-example");
        assertThat(marker).as("README marker").isPositive();
        int start = readme.indexOf("```json", marker) + "```json".length();
        ProfileFile file = ProfileFile.parse("README.md", readme.substring(start, readme.indexOf("```", start)));
        assertThat(file.names()).containsExactly("lora-lean", "queue-only");
        assertThat(PickerShape.of(picker(file, "lora-lean")))
                .containsExactly(
                        "name lora-lean",
                        "filter lora-capacity",
                        "filter lora-residency maxReplicas=4 queueThreshold=16 kvCacheThreshold=0.9",
                        "scorer queue minSpread=2 weight 2.0",
                        "scorer kv-cache weight 1.0",
                        "scorer lora-residency ResidencyScores[inSlot=1.0, inHost=0.8, freeSlot=0.6, idleSlot=0.3, allSlotsBusy=0.0] weight 3.0",
                        "scorer prefill-queue minSpreadTokens=2000 weight 0.5",
                        "picker MaxScorePicker",
                        "pre-request OwnPicksCounter");
        assertThat(PickerShape.of(picker(file, "queue-only")))
                .contains("scorer queue minSpread=0 weight 1.0", "picker MaxScorePicker")
                .noneMatch(line -> line.startsWith("pre-request"));
    }

    @Test
    void namesDefaultToTheTypeWeightsToOneAndThePickerToMaxScore() {
        ProfileFile file = parse(file("""
                {"type": "queue-scorer"}, {"type": "kv-cache-scorer"}, {"type": "lora-bridge-scorer"}
                """, """
                {"pluginRef": "queue-scorer"}, {"pluginRef": "kv-cache-scorer", "weight": 0}
                """));
        assertThat(PickerShape.of(picker(file, "mine")))
                .containsExactly("name mine", "scorer queue minSpread=0 weight 1.0", "picker MaxScorePicker");
    }

    @Test
    void everyParameterReachesItsPart() {
        ProfileFile file = parse(file("""
                {"type": "lora-spread-filter", "parameters": {"overloadWaiting": 5, "timeout": "2m", "cooldown": "0s"}},
                {"type": "lora-residency-filter", "parameters": {"maxReplicas": 2, "queueThreshold": 0, "kvCacheThreshold": 0.5}},
                {"type": "prefill-queue-scorer", "parameters": {"minSpreadTokens": 1}},
                {"type": "lora-load-state-scorer", "parameters": {"gpuResident": 0.9, "homeBonus": 0, "headroomBonus": 0.05}},
                {"type": "lora-residency-scorer", "parameters": {"inSlot": 2, "inHost": 1}},
                {"type": "lora-affinity-scorer", "parameters": {"distinctAdapters": true}},
                {"type": "queue-scorer", "parameters": {"minSpread": 2, "slotTurnover": true}}
                """, """
                {"pluginRef": "lora-spread-filter"}, {"pluginRef": "lora-residency-filter"},
                {"pluginRef": "prefill-queue-scorer"}, {"pluginRef": "lora-load-state-scorer", "weight": 1.5},
                {"pluginRef": "lora-residency-scorer"}, {"pluginRef": "lora-affinity-scorer", "weight": 1e-3},
                {"pluginRef": "queue-scorer"}
                """));
        assertThat(PickerShape.of(picker(file, "mine"))).contains("scorer queue minSpread=2 slotTurnover weight 1.0");
        assertThat(PickerShape.of(picker(file, "mine")))
                .containsSequence(
                        "filter lora-spread Settings[overloadWaiting=5, timeoutNanos=120000000000, cooldownNanos=0, "
                                + "persistenceNanos=2000000000]",
                        "filter lora-residency maxReplicas=2 queueThreshold=0 kvCacheThreshold=0.5",
                        "scorer prefill-queue minSpreadTokens=1 weight 1.0",
                        "scorer lora-load-state Tiers[gpuResident=0.9, cpuResident=0.7, freeSlot=0.6, evictable=0.3, saturated=0.0, "
                                + "homeBonus=0.0, headroomBonus=0.05] weight 1.5",
                        "scorer lora-residency ResidencyScores[inSlot=2.0, inHost=1.0, freeSlot=0.6, idleSlot=0.3, allSlotsBusy=0.0] weight 1.0",
                        "scorer lora-affinity distinctAdapters weight 0.001");
    }

    @Test
    void flowControlIsNoPluginOfAProfile() {
        // How long a request waits for a slot is the router's flow control (router.json), whatever the profile.
        assertThatThrownBy(() -> parse(file(
                        "{\"type\": \"slot-wait\", \"parameters\": {\"maxWait\": \"1s\"}}",
                        "{\"pluginRef\": \"slot-wait\"}")))
                .hasMessageContaining("unknown type 'slot-wait'");
    }

    @Test
    void aPluginTypeRegisteredTwiceIsAnError() {
        Map<String, PluginType> registry = new LinkedHashMap<>();
        PluginType queue = PluginTypes.find(PluginTypes.QUEUE_SCORER);
        PluginTypes.register(registry, queue);
        assertThatThrownBy(() -> PluginTypes.register(registry, queue))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("two plugin types named queue-scorer");
        assertThat(registry).containsOnlyKeys(PluginTypes.QUEUE_SCORER);
    }

    @Test
    void everyPickerGetsItsOwnStatefulParts() {
        ProfileFile file = parse(file(
                "{\"type\": \"lora-spread-filter\"}, {\"type\": \"round-robin-picker\"}",
                "{\"pluginRef\": \"lora-spread-filter\"}, {\"pluginRef\": \"round-robin-picker\"}"));
        EndpointPicker one = picker(file, "mine");
        EndpointPicker two = picker(file, "mine");
        assertThat(one.filters().getFirst()).isNotSameAs(two.filters().getFirst());
        assertThat(one.picker()).isNotSameAs(two.picker());
    }

    @Test
    void commentsAreAllowed() {
        ProfileFile file = parse("// my profiles\n"
                + file(
                        "/* the only one */ {\"type\": \"queue-scorer\"}",
                        "{\"pluginRef\": \"queue-scorer\"} // weight 1\n"));
        assertThat(file.names()).containsExactly("mine");
    }

    // The errors the task names: each message names the file, the profile and the entry at fault.

    @Test
    void anUnknownPluginTypeIsAnError() {
        assertThatThrownBy(
                        () -> parse(file("{\"name\": \"q\", \"type\": \"queue-scorrer\"}", "{\"pluginRef\": \"q\"}")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(
                        "profile file mine.json: profile 'mine', plugin 'q': unknown type 'queue-scorrer'; known: ")
                .hasMessageContaining("queue-scorer, kv-cache-scorer");
        assertThatThrownBy(() -> parse(file(
                        "{\"type\": \"queue-scorer\"}, {\"type\": \"prefix-cache-scorer\"}",
                        "{\"pluginRef\": \"queue-scorer\"}")))
                .hasMessageStartingWith(
                        "profile file mine.json: plugin 'prefix-cache-scorer' (used by no profile): unknown type");
    }

    @Test
    void aPluginRefThatNamesNoPluginIsAnError() {
        assertThatThrownBy(() -> parse(file(
                        "{\"type\": \"queue-scorer\"}, {\"type\": \"kv-cache-scorer\"}",
                        "{\"pluginRef\": \"queue-scorer\"}, {\"pluginRef\": \"kv-cache\"}")))
                .hasMessage("profile file mine.json: profile 'mine', pluginRef 'kv-cache': names no plugin; plugins: "
                        + "queue-scorer, kv-cache-scorer");
    }

    @Test
    void aWeightThatIsNegativeNaNInfiniteOrNotANumberIsAnError() {
        for (String weight : new String[] {"-1", "NaN", "Infinity", "\"2\"", "null", "true"}) {
            assertThatThrownBy(() -> parse(file(
                            "{\"type\": \"queue-scorer\"}",
                            "{\"pluginRef\": \"queue-scorer\", \"weight\": " + weight + "}")))
                    .as(weight)
                    .hasMessage(
                            "profile file mine.json: profile 'mine', pluginRef 'queue-scorer': weight must be a finite "
                                    + "number >= 0, got " + weight);
        }
    }

    @Test
    void anUnknownParameterIsAnError() {
        assertThatThrownBy(() -> parse(file(
                        "{\"type\": \"queue-scorer\", \"parameters\": {\"minSpred\": 4}}",
                        "{\"pluginRef\": \"queue-scorer\"}")))
                .hasMessage("profile file mine.json: profile 'mine', plugin 'queue-scorer' (queue-scorer): unknown "
                        + "parameter 'minSpred'; known: minSpread, slotTurnover");
        assertThatThrownBy(() -> parse(file(
                        "{\"type\": \"kv-cache-scorer\", \"parameters\": {\"weight\": 2}}",
                        "{\"pluginRef\": \"kv-cache-scorer\"}")))
                .hasMessageEndingWith("unknown parameter 'weight'; this type takes none");
    }

    @Test
    void aBadParameterValueIsAnError() {
        String prefix = "profile file mine.json: profile 'mine', plugin 'p' ";
        record Case(String type, String parameters, String message) {}
        for (Case c : new Case[] {
            new Case(
                    "queue-scorer",
                    "{\"minSpread\": -1}",
                    "(queue-scorer): parameter 'minSpread' must be an integer >= 0, got -1"),
            new Case(
                    "queue-scorer",
                    "{\"minSpread\": 2.5}",
                    "(queue-scorer): parameter 'minSpread' must be an integer >= 0, got 2.5"),
            new Case(
                    "queue-scorer",
                    "{\"minSpread\": \"4\"}",
                    "(queue-scorer): parameter 'minSpread' must be an integer >= 0, got \"4\""),
            new Case(
                    "queue-scorer",
                    "{\"slotTurnover\": \"yes\"}",
                    "(queue-scorer): parameter 'slotTurnover' must be true or false, got \"yes\""),
            new Case("queue-scorer", "[4]", "(queue-scorer): parameters must be an object, got [4]"),
            new Case(
                    "prefill-queue-scorer",
                    "{\"minSpreadTokens\": 0}",
                    "(prefill-queue-scorer): parameter 'minSpreadTokens' must be an integer >= 1, got 0"),
            new Case(
                    "lora-residency-filter",
                    "{\"kvCacheThreshold\": 1.5}",
                    "(lora-residency-filter): parameter 'kvCacheThreshold' must be a number in [0.0, 1.0], got 1.5"),
            new Case(
                    "lora-residency-scorer",
                    "{\"inHost\": NaN}",
                    "(lora-residency-scorer): parameter 'inHost' must be a finite number, got NaN"),
            new Case(
                    "lora-residency-scorer",
                    "{\"inHost\": 0.5, \"freeSlot\": 0.6}",
                    "(lora-residency-scorer): residency scores must not increase from inSlot to allSlotsBusy: "
                            + "1.0, 0.5, 0.6, 0.3, 0.0"),
            new Case(
                    "lora-load-state-scorer",
                    "{\"homeBonus\": 0.2}",
                    "(lora-load-state-scorer): lora-load-state bonuses 0.23"), // (then "could lift a tier over the
            // next")
            new Case(
                    "lora-spread-filter",
                    "{\"timeout\": 60}",
                    "(lora-spread-filter): parameter 'timeout' must be a duration with a unit (e.g. 30s) of at least 1ms, got 60"),
            new Case(
                    "lora-spread-filter",
                    "{\"cooldown\": \"soon\"}",
                    "(lora-spread-filter): parameter 'cooldown' must be a duration with a unit (e.g. 30s) of at least 0s, got \"soon\""),
        }) {
            assertThatThrownBy(() -> parse(file(
                            "{\"name\": \"p\", \"type\": \"" + c.type() + "\", \"parameters\": " + c.parameters() + "}",
                            "{\"pluginRef\": \"p\"}")))
                    .as(c.type() + " " + c.parameters())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith(prefix + c.message());
        }
    }

    @Test
    void aPluginInSeveralProfilesNamesThemAll() {
        assertThatThrownBy(() -> parse(HEAD + """
                "plugins": [{"type": "queue-scorer", "parameters": {"minSpread": -2}}],
                "schedulingProfiles": [{"name": "a", "plugins": [{"pluginRef": "queue-scorer"}]},
                                       {"name": "b", "plugins": [{"pluginRef": "queue-scorer"}]}]}
                """))
                .hasMessageStartingWith(
                        "profile file mine.json: profiles 'a', 'b', plugin 'queue-scorer' (queue-scorer): ");
    }

    @Test
    void misshapenProfilesAreErrors() {
        String scorer =
                "{\"type\": \"queue-scorer\"}, {\"type\": \"lora-capacity-filter\"}, {\"type\": \"max-score-picker\"}, "
                        + "{\"name\": \"rr\", \"type\": \"round-robin-picker\"}";
        assertThatThrownBy(() -> parse(file(scorer, "{\"pluginRef\": \"lora-capacity-filter\", \"weight\": 1}")))
                .hasMessage(
                        "profile file mine.json: profile 'mine', pluginRef 'lora-capacity-filter': a weight applies "
                                + "only to scorers, and this is a filter");
        assertThatThrownBy(() -> parse(file(scorer, "{\"pluginRef\": \"max-score-picker\"}, {\"pluginRef\": \"rr\"}")))
                .hasMessage("profile file mine.json: profile 'mine', pluginRef 'rr': a second picker (the first is "
                        + "'max-score-picker')");
        assertThatThrownBy(() ->
                        parse(file(scorer, "{\"pluginRef\": \"queue-scorer\"}, {\"pluginRef\": \"queue-scorer\"}")))
                .hasMessage("profile file mine.json: profile 'mine', pluginRef 'queue-scorer': referred to twice");
        assertThatThrownBy(() -> parse(file(scorer, "{\"weight\": 2}")))
                .hasMessage("profile file mine.json: profile 'mine': plugins[0] has no pluginRef");
        assertThatThrownBy(() -> parse(file(scorer, "")))
                .hasMessage("profile file mine.json: profile 'mine': no plugins");
        assertThatThrownBy(() -> parse(file(
                        scorer + ", {\"type\": \"kv-cache-scorer\", \"name\": \"queue-scorer\"}",
                        "{\"pluginRef\": \"queue-scorer\"}")))
                .hasMessage("profile file mine.json: two plugins named 'queue-scorer' (give one a name of its own)");
        assertThatThrownBy(() -> parse(file("{\"name\": \"q\"}", "{\"pluginRef\": \"q\"}")))
                .hasMessage("profile file mine.json: plugins[0] ('q') has no type");
    }

    @Test
    void misshapenFilesAreErrors() {
        assertThatThrownBy(() -> parse("{\"kind\": \"EndpointPickerConfig\", \"schedulingProfiles\": []}"))
                .hasMessage(
                        "profile file mine.json: apiVersion must be inference.networking.x-k8s.io/v1alpha1, got nothing");
        assertThatThrownBy(() -> parse(HEAD.replace("EndpointPickerConfig", "RouterConfig") + "\"plugins\": []}"))
                .hasMessage("profile file mine.json: kind must be EndpointPickerConfig, got 'RouterConfig'");
        assertThatThrownBy(() -> parse(HEAD + "\"plugins\": []}"))
                .hasMessage("profile file mine.json: no schedulingProfiles");
        assertThatThrownBy(() -> parse(HEAD + """
                "plugins": [{"type": "queue-scorer"}],
                "schedulingProfiles": [{"name": "a", "plugins": [{"pluginRef": "queue-scorer"}]},
                                       {"name": "a", "plugins": [{"pluginRef": "queue-scorer"}]}]}
                """))
                .hasMessage("profile file mine.json: two schedulingProfiles named 'a'");
        assertThatThrownBy(() ->
                        parse(file("{\"type\": \"queue-scorer\"}", "{\"pluginRef\": \"queue-scorer\", \"weigth\": 2}")))
                .hasMessageStartingWith("profile file mine.json, line 3, column ")
                .hasMessageContaining("Unrecognized field \"weigth\"");
        assertThatThrownBy(() -> parse(file(
                        "{\"type\": \"queue-scorer\"}",
                        "{\"pluginRef\": \"queue-scorer\", " + "\"weight\": 1, \"weight\": 2}")))
                .hasMessageContaining("Duplicate field 'weight'");
        assertThatThrownBy(() -> parse(HEAD + "\"plugins\": ["))
                .hasMessageStartingWith("profile file mine.json, line ");
        assertThatThrownBy(() -> parse("")).hasMessageStartingWith("profile file mine.json");
    }

    @Test
    void readingAMissingFileNamesIt() {
        Path missing = Path.of("no-such-profiles.json");
        assertThatThrownBy(() -> ProfileFile.read(missing))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("cannot read profile file no-such-profiles.json");
    }
}
