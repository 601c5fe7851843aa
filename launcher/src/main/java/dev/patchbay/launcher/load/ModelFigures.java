package dev.patchbay.launcher.load;

/** One model's requests of a run, its failed ones, and its successful ones' TTFT. */
public record ModelFigures(int requests, int errors, Ttft ttft) {}
