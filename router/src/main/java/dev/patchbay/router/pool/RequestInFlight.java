package dev.patchbay.router.pool;

/**
 * One request the router sent to an endpoint ({@link EndpointPool#sent}), from the send to the end of its answer.
 * It holds the request's prompt tokens in the endpoint's prefill tally until the answer's first byte, and, when
 * the picker counts its own picks, it stands in the endpoint's metrics until a scrape that began after the send
 * shows the server's own count: waiting until the first byte, running until the answer ends, and gone after
 * that (a finished request is on no server's page). Each step happens once, whatever order the calls come in.
 */
public final class RequestInFlight {
    enum Phase { WAITING, RUNNING, DONE }

    private final EndpointPool.Slot slot;
    private final String adapter;
    private final long sentNanos;
    private final PromptInFlight prompt;
    private Phase phase = Phase.WAITING; // guarded by the slot

    RequestInFlight(EndpointPool.Slot slot, String adapter, long sentNanos, PromptInFlight prompt) {
        this.slot = slot;
        this.adapter = adapter;
        this.sentNanos = sentNanos;
        this.prompt = prompt;
    }

    /** The answer's first byte arrived: the prefill is done and the request runs. */
    public void answering() {
        prompt.answered();
        if (slot != null) {
            slot.advance(this, Phase.RUNNING);
        }
    }

    /** The answer ended, or the request failed or was dropped: it is nowhere any more. */
    public void finished() {
        prompt.answered();
        if (slot != null) {
            slot.advance(this, Phase.DONE);
        }
    }

    String adapter() {
        return adapter;
    }

    long sentNanos() {
        return sentNanos;
    }

    Phase phase() {
        return phase;
    }

    /** Moves forward only; returns false when already there or past it. Called under the slot's lock. */
    boolean moveTo(Phase next) {
        if (next.ordinal() <= phase.ordinal()) {
            return false;
        }
        phase = next;
        return true;
    }
}
