package dev.patchbay.router.pick.profile;

import java.util.List;
import java.util.function.Function;

/**
 * A plugin type a profile file may name: the parameters it takes and how it reads them into a {@link Plugin}.
 * {@code read} throws IllegalArgumentException for a bad value.
 */
public record PluginType(String name, List<String> parameters, Function<PluginParameters, Plugin> read) {
    public PluginType {
        parameters = List.copyOf(parameters);
    }

    /** Checks the parameters' names, then reads them. */
    public Plugin plugin(PluginParameters given) {
        given.onlyThese(parameters);
        return read.apply(given);
    }
}
