package dev.patchbay.bench.sim;

import dev.patchbay.engine.FinishReason;
import dev.patchbay.engine.RequestListener;
import dev.patchbay.engine.RequestOutput;
import dev.patchbay.engine.clock.Clock;
import java.util.Arrays;

/**
 * What happened to each request of a trace, indexed like the trace: when it got its first token, when and
 * how it ended. Every request ends in exactly one of: completed, failed (refused, aborted or errored), or
 * unfinished when the run stopped.
 */
final class RequestLedger {
    enum Fate {
        NOT_SENT,
        IN_FLIGHT,
        REFUSED,
        COMPLETED,
        FAILED
    }

    private final Clock clock;
    private final long[] arrival;
    private final long[] firstToken;
    private final long[] finish;
    private final int[] outputTokens;
    private final Fate[] fate;

    RequestLedger(Trace trace, Clock clock) {
        this.clock = clock;
        int n = trace.size();
        arrival = trace.arrivalNanos();
        firstToken = new long[n];
        finish = new long[n];
        outputTokens = new int[n];
        fate = new Fate[n];
        Arrays.fill(firstToken, -1);
        Arrays.fill(finish, -1);
        Arrays.fill(fate, Fate.NOT_SENT);
    }

    RequestListener sent(int i) {
        fate[i] = Fate.IN_FLIGHT;
        return new Listener(i);
    }

    void refused(int i) {
        fate[i] = Fate.REFUSED;
    }

    int size() {
        return fate.length;
    }

    Fate fate(int i) {
        return fate[i];
    }

    long firstTokenNanos(int i) {
        return firstToken[i];
    }

    long finishNanos(int i) {
        return finish[i];
    }

    long arrivalNanos(int i) {
        return arrival[i];
    }

    int outputTokens(int i) {
        return outputTokens[i];
    }

    private final class Listener implements RequestListener {
        private final int i;

        Listener(int i) {
            this.i = i;
        }

        @Override
        public void onOutput(RequestOutput out) {
            long now = clock.nanos();
            if (firstToken[i] < 0 && out.outputTokens() > 0) firstToken[i] = now;
            outputTokens[i] = out.outputTokens();
            if (out.finished()) {
                finish[i] = now;
                boolean ok = out.finishReason() == FinishReason.STOP || out.finishReason() == FinishReason.LENGTH;
                fate[i] = ok ? Fate.COMPLETED : Fate.FAILED;
            }
        }

        @Override
        public boolean wantsText() {
            return false;
        }
    }
}
