package dev.patchbay.router.pick;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** Ignores scores: takes the candidates in address order, starting one further each call. */
public final class RoundRobinPicker implements Picker {
    public static final String NAME = "round-robin";

    private final AtomicLong next = new AtomicLong();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<EndpointState> rank(List<EndpointState> candidates, double[] totalScores) {
        List<EndpointState> sorted = new ArrayList<>(candidates);
        sorted.sort(Comparator.comparing((EndpointState s) -> s.endpoint().host())
                .thenComparingInt(s -> s.endpoint().port()));
        int n = sorted.size();
        int start = (int) Math.floorMod(next.getAndIncrement(), (long) n);
        List<EndpointState> ranked = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            ranked.add(sorted.get((start + i) % n));
        }
        return ranked;
    }
}
