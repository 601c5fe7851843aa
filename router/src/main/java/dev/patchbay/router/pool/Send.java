package dev.patchbay.router.pool;

import dev.patchbay.router.pick.Endpoint;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One request the router sent to an endpoint ({@link EndpointPool#sent}), from the send to the end of its answer: the
 * one record of a send, which the endpoint's slot in the pool keeps its books by. Its prompt tokens count in the
 * endpoint's prefill tally until the answer's first byte. Once {@link #countUntilShown counted}, it also stands in
 * the endpoint's metrics until a scrape that began after the send shows the server's own count: waiting until the
 * first byte, running until the answer ends, gone after that (a finished request is on no server's page). Each step
 * happens once, whatever order the calls come in.
 */
public final class Send {
    enum Phase {
        WAITING,
        RUNNING,
        DONE
    }

    private final EndpointPool pool;
    private final Endpoint endpoint;
    /** The endpoint's slot when the send was made, or null when the endpoint was not in the pool. */
    private final EndpointPool.Slot slot;

    private final String adapter;
    private final long promptTokens;
    private final long sentNanos;
    /** The tally the prompt was added to: a slot's, or one of its own for an endpoint not in the pool. */
    private final AtomicLong promptTally;

    private final AtomicBoolean promptAnswered = new AtomicBoolean();
    private Phase phase = Phase.WAITING; // guarded by the slot
    private boolean counted; // guarded by the slot

    Send(
            EndpointPool pool,
            Endpoint endpoint,
            EndpointPool.Slot slot,
            String adapter,
            long promptTokens,
            long sentNanos) {
        this.pool = pool;
        this.endpoint = endpoint;
        this.slot = slot;
        this.adapter = adapter;
        this.promptTokens = promptTokens;
        this.sentNanos = sentNanos;
        this.promptTally = slot == null ? new AtomicLong() : slot.promptTokensInFlight;
        promptTally.addAndGet(promptTokens);
    }

    public Endpoint endpoint() {
        return endpoint;
    }

    /** From now until a scrape shows it, the request counts in its endpoint's metrics. */
    public void countUntilShown() {
        if (slot != null) {
            slot.count(this);
        }
    }

    /** The answer's first byte arrived: the prefill is done and the request runs. */
    public void answering() {
        answerPrompt();
        if (slot != null) {
            slot.advance(this, Phase.RUNNING);
        }
    }

    /** The answer ended, or the request failed or was dropped: it is nowhere any more. */
    public void finished() {
        answerPrompt();
        if (slot != null) {
            slot.advance(this, Phase.DONE);
        }
    }

    /**
     * The request goes to {@code target} instead (a retry, or an endpoint the data plane chose): this send never
     * happened, and one to {@code target} is recorded in its place, counted as this one was. Returns this send when
     * {@code target} is its own endpoint.
     */
    public Send movedTo(Endpoint target) {
        if (target.equals(endpoint)) {
            return this;
        }
        boolean wasCounted = isCounted();
        finished();
        Send moved = pool.sent(target, adapter, promptTokens);
        if (wasCounted) {
            moved.countUntilShown();
        }
        return moved;
    }

    private boolean isCounted() {
        if (slot == null) {
            return false;
        }
        synchronized (slot) {
            return counted;
        }
    }

    private void answerPrompt() {
        if (promptAnswered.compareAndSet(false, true)) {
            promptTally.addAndGet(-promptTokens);
        }
    }

    String adapter() {
        return adapter;
    }

    long sentNanos() {
        return sentNanos;
    }

    // Called under the slot's lock.
    Phase phase() {
        return phase;
    }

    boolean counted() {
        return counted;
    }

    void markCounted() {
        counted = true;
    }

    /** Moves forward only; returns false when already there or past it. */
    boolean moveTo(Phase next) {
        if (next.ordinal() <= phase.ordinal()) {
            return false;
        }
        phase = next;
        return true;
    }
}
