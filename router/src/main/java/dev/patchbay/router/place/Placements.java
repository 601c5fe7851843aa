package dev.patchbay.router.place;

import java.util.List;

/** The placement algorithms a configuration may name. */
public final class Placements {
    public static final List<String> ALGORITHMS =
            List.of(BalancedPlacement.NAME, DynamoPlacement.HRW_NAME, DynamoPlacement.MCF_NAME);

    private Placements() {}

    /** A new instance (algorithms keep state from tick to tick) of the algorithm {@code name}. */
    public static PlacementAlgorithm create(String name) {
        return switch (name) {
            case BalancedPlacement.NAME -> new BalancedPlacement();
            case DynamoPlacement.HRW_NAME -> new DynamoPlacement(DynamoPlacement.Mode.HRW);
            case DynamoPlacement.MCF_NAME -> new DynamoPlacement(DynamoPlacement.Mode.MCF);
            default ->
                throw new IllegalArgumentException(
                        "unknown placement algorithm '" + name + "'; known: " + String.join(", ", ALGORITHMS));
        };
    }
}
