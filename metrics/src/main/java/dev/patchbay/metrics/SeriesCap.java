package dev.patchbay.metrics;

import dev.patchbay.engine.stats.AdapterState;
import dev.patchbay.engine.stats.FinishCounts;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Which adapters get their own per-adapter series when more are listed than the cap allows.
 *
 * <p>The rule keeps what a router needs most and stays stable while the workload runs: adapters in batch slots
 * first, then those resident in host memory, then the rest (loading or only queued), each group in name order.
 * It depends on the snapshot alone, so every scrape of one snapshot selects the same adapters, and it is linear.
 */
final class SeriesCap {
    private SeriesCap() {}

    private static final Comparator<String> NAME_ORDER = Comparator.naturalOrder();

    /**
     * @param kept   adapters with their own series, sorted by name
     * @param folded adapters summed into {@code __other__}, in no particular order
     */
    record Selection(List<AdapterState> kept, List<AdapterState> folded) {

        /** One row per kept adapter and one for {@code __other__} if anything was folded, sorted by name. */
        List<AdapterRow> rows() {
            List<AdapterRow> rows = new ArrayList<>(kept.size() + 1);
            for (AdapterState a : kept) rows.add(AdapterRow.of(a));
            if (!folded.isEmpty()) {
                AdapterRow other = AdapterRow.sumOf(folded);
                int at = 0;
                while (at < rows.size() && NAME_ORDER.compare(rows.get(at).name(), other.name()) < 0) at++;
                rows.add(at, other);
            }
            return rows;
        }
    }

    static Selection select(List<AdapterState> adapters, int cap) {
        List<AdapterState> byName = sortedByName(adapters);
        boolean nameClash = byName.stream().anyMatch(a -> a.name().equals(AdapterRow.OTHER));
        if (byName.size() <= cap && !nameClash) return new Selection(byName, List.of());
        List<AdapterState> gpu = new ArrayList<>(), cpu = new ArrayList<>(), none = new ArrayList<>();
        List<AdapterState> folded = new ArrayList<>();
        for (AdapterState a : byName) {
            // an adapter that is itself called __other__ cannot have a series of its own: it joins the sum
            if (a.name().equals(AdapterRow.OTHER)) {
                folded.add(a);
                continue;
            }
            switch (a.level()) {
                case GPU -> gpu.add(a);
                case CPU -> cpu.add(a);
                case NONE -> none.add(a);
            }
        }
        List<AdapterState> ranked = new ArrayList<>(byName.size());
        ranked.addAll(gpu);
        ranked.addAll(cpu);
        ranked.addAll(none);
        int keep = Math.min(cap, ranked.size());
        List<AdapterState> kept = new ArrayList<>(ranked.subList(0, keep));
        kept.sort(Comparator.comparing(AdapterState::name, NAME_ORDER));
        folded.addAll(ranked.subList(keep, ranked.size()));
        return new Selection(kept, folded);
    }

    /**
     * The adapters sorted by name, one per name. The engine lists them by name; two entries share a name while an
     * adapter that was unloaded and loaded again still has requests of its old version in flight: one series must
     * hold both, so they are summed.
     */
    static List<AdapterState> sortedByName(List<AdapterState> adapters) {
        for (int i = 1; i < adapters.size(); i++) {
            if (NAME_ORDER.compare(adapters.get(i - 1).name(), adapters.get(i).name()) >= 0) {
                List<AdapterState> copy = new ArrayList<>(adapters);
                copy.sort(Comparator.comparing(AdapterState::name, NAME_ORDER));
                return mergeSameNames(copy);
            }
        }
        return adapters;
    }

    private static List<AdapterState> mergeSameNames(List<AdapterState> sorted) {
        List<AdapterState> out = new ArrayList<>(sorted.size());
        for (AdapterState a : sorted) {
            int last = out.size() - 1;
            if (last >= 0 && out.get(last).name().equals(a.name())) {
                out.set(last, merge(out.get(last), a));
            } else {
                out.add(a);
            }
        }
        return out;
    }

    private static AdapterState merge(AdapterState x, AdapterState y) {
        AdapterState fastest = x.level().ordinal() <= y.level().ordinal() ? x : y;
        FinishCounts fx = x.finished() == null ? FinishCounts.ZERO : x.finished();
        FinishCounts fy = y.finished() == null ? FinishCounts.ZERO : y.finished();
        return new AdapterState(
                x.name(),
                fastest.id(),
                x.running() + y.running(),
                x.waiting() + y.waiting(),
                fastest.level(),
                x.loading() || y.loading(),
                x.pinned() || y.pinned(),
                fastest.rank(),
                x.memoryBytes() + y.memoryBytes(),
                x.promptTokens() + y.promptTokens(),
                x.generationTokens() + y.generationTokens(),
                new FinishCounts(
                        fx.stop() + fy.stop(),
                        fx.length() + fy.length(),
                        fx.abort() + fy.abort(),
                        fx.error() + fy.error()));
    }
}
