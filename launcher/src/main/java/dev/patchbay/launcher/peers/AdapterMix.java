package dev.patchbay.launcher.peers;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which adapters a benchmark's requests name, and how often: a share per adapter, adapters grouped in tiers of equal
 * share so that figures can be read per tier (a router that serves the hot adapters well and starves the cold ones
 * shows it there).
 */
public record AdapterMix(List<Share> shares) {
    /** {@code adapter} gets {@code share} of the requests (shares add up to 1); {@code tier} names its group. */
    public record Share(String adapter, String tier, double share) {}

    public AdapterMix {
        shares = List.copyOf(shares);
        double total = shares.stream().mapToDouble(Share::share).sum();
        if (Math.abs(total - 1) > 1e-9) {
            throw new IllegalArgumentException("adapter shares add up to " + total + ", not 1");
        }
    }

    /**
     * The gateway project's multi-LoRA benchmark: 15 adapters, five at 12% of the requests each, five at 6%, five at
     * 2% (its {@code lora_traffic_split}).
     */
    public static AdapterMix gatewayMultiLora() {
        List<Share> shares = new ArrayList<>();
        tier(shares, "hot", 0.12);
        tier(shares, "warm", 0.06);
        tier(shares, "cold", 0.02);
        return new AdapterMix(shares);
    }

    private static void tier(List<Share> shares, String tier, double share) {
        for (int i = 1; i <= 5; i++) {
            shares.add(new Share(tier + "-" + i, tier + " (" + Math.round(share * 100) + "% each)", share));
        }
    }

    public List<String> adapters() {
        return shares.stream().map(Share::adapter).toList();
    }

    /** Tier of each adapter, in the mix's order. */
    public Map<String, String> tierOf() {
        Map<String, String> tiers = new LinkedHashMap<>();
        for (Share s : shares) {
            tiers.put(s.adapter(), s.tier());
        }
        return tiers;
    }

    /** The tiers in the mix's order. */
    public List<String> tiers() {
        return shares.stream().map(Share::tier).distinct().toList();
    }
}
