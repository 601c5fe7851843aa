package dev.patchbay.metrics;

import java.util.Set;
import java.util.function.Predicate;

/**
 * The {@code name[]} filter: a family is included when asked for by its name or by one of its exposed sample names
 * ({@code _total}, {@code _bucket}, {@code _count}, {@code _sum}, {@code _created}).
 *
 * <p>client_java's {@code MetricNameFilter} also strips {@code _info}, which would make
 * {@code name[]=vllm:lora_requests_info} select the counter {@code vllm:lora_requests} as well: vLLM names
 * gauges {@code *_info}, so Patchbay matches names itself.
 */
record NameFilter(Set<String> names) implements Predicate<String> {

    private static final String[] SUFFIXES = {"_total", "_bucket", "_count", "_sum", "_created"};

    static Predicate<String> of(Set<String> names) {
        return names == null || names.isEmpty() ? name -> true : new NameFilter(Set.copyOf(names));
    }

    @Override
    public boolean test(String family) {
        if (names.contains(family)) return true;
        for (String suffix : SUFFIXES) {
            if (names.contains(family + suffix)) return true;
        }
        return false;
    }
}
