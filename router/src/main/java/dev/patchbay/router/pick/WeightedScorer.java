package dev.patchbay.router.pick;

/** A scorer and its weight in the profile's sum. */
public record WeightedScorer(Scorer scorer, double weight) {}
