package dev.patchbay.launcher.conformance;

/**
 * One check of the kit and how it went.
 *
 * @param id          a stable name, for reports and for the claims a test holds a picker to
 * @param requirement what the protocol (or, for measured checks, the operator) asks, in one sentence
 * @param verdict     passed, failed, or skipped with the reason in {@code detail}
 * @param detail      what was seen: counts, the first few failures, or why the check could not run
 */
public record CheckResult(String id, String requirement, Verdict verdict, String detail) {
    public enum Verdict {
        PASS,
        FAIL,
        SKIPPED
    }

    static CheckResult pass(String id, String requirement, String detail) {
        return new CheckResult(id, requirement, Verdict.PASS, detail);
    }

    static CheckResult of(String id, String requirement, boolean passed, String detail) {
        return new CheckResult(id, requirement, passed ? Verdict.PASS : Verdict.FAIL, detail);
    }

    static CheckResult skipped(String id, String requirement, String why) {
        return new CheckResult(id, requirement, Verdict.SKIPPED, why);
    }
}
