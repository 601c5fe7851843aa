package dev.patchbay.metrics;

import java.util.HashSet;
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
record NameFilter(Set<String> families) implements Predicate<String> {

    private static final String[] SUFFIXES = {"_total", "_bucket", "_count", "_sum", "_created"};

    static Predicate<String> of(Set<String> names) {
        return names == null || names.isEmpty() ? name -> true : new NameFilter(familiesAskedFor(names));
    }

    /**
     * Every family name a request for {@code names} selects: each name itself and, for a sample name, its family's.
     * Worked out once, so a page's filter costs one lookup per family instead of a string per suffix.
     */
    private static Set<String> familiesAskedFor(Set<String> names) {
        Set<String> families = new HashSet<>(names);
        for (String name : names) {
            for (String suffix : SUFFIXES) {
                if (name.endsWith(suffix)) families.add(name.substring(0, name.length() - suffix.length()));
            }
        }
        return Set.copyOf(families);
    }

    @Override
    public boolean test(String family) {
        return families.contains(family);
    }
}
