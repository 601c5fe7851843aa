package dev.patchbay.router.flow;

import dev.patchbay.router.pick.PickRequest;
import dev.patchbay.router.pick.PickResult;
import dev.patchbay.router.scrape.LoraPlacement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedList;
import java.util.List;
import java.util.ListIterator;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Requests for an adapter that no endpoint has a batch slot for wait here, in the router, instead of in some
 * server's queue: oldest first, each is picked again after every scrape round and goes out as soon as a pick finds
 * its adapter a slot (or a server where its adapter is loaded or loading), or once it has waited the longest wait.
 *
 * <p>Why: when a burst fills every slot in the pool, a request bound to a server on arrival waits for a slot there,
 * and servers free slots at very different rates (one whose slots hot adapters hold hardly ever does). Held here,
 * the request goes to whichever server frees a slot first: late binding, as the gateway's flow control holds
 * requests while the pool is saturated. Base-model requests and adapters that have a place somewhere never wait.
 *
 * <p>A held request's release must record its send with the pool before it returns, so that the next held request,
 * picked right after it, sees that slot taken. Thread-safe: holds, releases and removals take the queue's lock, and
 * releases run on the thread that calls {@link #releaseReady}.
 */
public final class SlotWaitQueue {
    /** More requests than this wait nowhere: they go out at once, as without the queue. */
    public static final int MAX_HELD = 10_000;

    /** One held request: how to pick for it again, and how to send it. */
    public interface Waiter {
        /** A pick for the request on the pool as it is now. */
        PickResult repick();

        /** Sends the request with {@code pick}, recording the send with the pool before returning. */
        void release(PickResult pick);

        /**
         * Waiters whose keys are equal get the same pick from the same pool (same request, same eligible
         * endpoints), so a round picks once for all of them until something is released; by default each waiter
         * is picked for alone.
         */
        default Object repickKey() {
            return this;
        }
    }

    private record Held(PickRequest request, Waiter waiter, long deadlineNanos) {}

    private final long maxWaitNanos;
    private final LongSupplier nanoClock;
    /** Oldest first: by deadline, as every request waits the same longest wait. */
    private final LinkedList<Held> held = new LinkedList<>();

    private long heldTotal;
    /** A release round is running: requests held again meanwhile wait in {@link #heldInRound} until it ends. */
    private boolean releasing;

    private final List<Held> heldInRound = new ArrayList<>();

    public SlotWaitQueue(long maxWaitNanos, LongSupplier nanoClock) {
        if (maxWaitNanos <= 0) {
            throw new IllegalArgumentException("the longest wait for a slot must be > 0, got " + maxWaitNanos + " ns");
        }
        this.maxWaitNanos = maxWaitNanos;
        this.nanoClock = nanoClock;
    }

    public long maxWaitNanos() {
        return maxWaitNanos;
    }

    /** True when {@code pick} would send an adapter request to an endpoint with no slot it can have. */
    public static boolean waitsForSlot(PickRequest request, PickResult pick) {
        return !request.baseModel()
                && !request.model().isEmpty()
                && pick.outcome() == PickResult.Outcome.PICKED
                && LoraPlacement.of(pick.best().metrics(), request.model()) == LoraPlacement.ALL_SLOTS_BUSY;
    }

    /**
     * Holds the request whose first pick was {@code first} when that pick {@link #waitsForSlot waits for a slot} and
     * the queue has room; true when held (its waiter's release sends it), false when it should go out at once.
     */
    public synchronized boolean hold(PickRequest request, PickResult first, Waiter waiter) {
        if (!waitsForSlot(request, first) || held.size() >= MAX_HELD) {
            return false;
        }
        held.addLast(new Held(request, waiter, nanoClock.getAsLong() + maxWaitNanos));
        heldTotal++;
        return true;
    }

    /**
     * Holds a request again that a server refused for want of a slot, until {@code deadlineNanos} (its first wait's
     * end), in its place among the others by that deadline; false when the deadline has passed or the queue is full
     * (it should go out at once).
     */
    public synchronized boolean holdAgain(PickRequest request, Waiter waiter, long deadlineNanos) {
        if (nanoClock.getAsLong() >= deadlineNanos || held.size() + heldInRound.size() >= MAX_HELD) {
            return false;
        }
        Held again = new Held(request, waiter, deadlineNanos);
        if (releasing) {
            heldInRound.add(again); // refused by a release of this round: picked again from the next round on
        } else {
            insertByDeadline(again);
        }
        return true;
    }

    private void insertByDeadline(Held again) {
        ListIterator<Held> it = held.listIterator(held.size());
        while (it.hasPrevious()) {
            if (it.previous().deadlineNanos() <= again.deadlineNanos()) {
                it.next();
                break;
            }
        }
        it.add(again);
    }

    /**
     * Picks again for every held request, oldest first, and releases each whose pick finds a place, or that has
     * waited the longest wait (with its pick of now). Call after each scrape round.
     *
     * <p>A pick that still waits for a slot stands for every later waiter with the same {@link Waiter#repickKey key}
     * until the next release: only a release changes the pool under this lock, and a send can take a slot but
     * never free one. So a burst of thousands held for a few hot adapters costs a few picks a round, not thousands.
     * (A slot some other thread's request frees during the round shows at the next round.)
     */
    public synchronized void releaseReady() {
        long now = nanoClock.getAsLong();
        Map<Object, PickResult> stillWaiting = new HashMap<>();
        releasing = true;
        try {
            releaseReady(now, stillWaiting);
        } finally {
            releasing = false;
            heldInRound.forEach(this::insertByDeadline);
            heldInRound.clear();
        }
    }

    private void releaseReady(long now, Map<Object, PickResult> stillWaiting) {
        for (Iterator<Held> it = held.iterator(); it.hasNext(); ) {
            Held h = it.next();
            boolean due = now >= h.deadlineNanos();
            if (!due && stillWaiting.containsKey(h.waiter().repickKey())) {
                continue;
            }
            PickResult pick = h.waiter().repick();
            if (due || !waitsForSlot(h.request(), pick)) {
                it.remove();
                // Released here, under the lock, so that the next held request's pick sees this send.
                h.waiter().release(pick);
                stillWaiting.clear();
            } else {
                stillWaiting.put(h.waiter().repickKey(), pick);
            }
        }
    }

    /**
     * Takes {@code waiter} out of the queue without releasing it (its request gave up); false when it is not held
     * (released already, or never held).
     */
    public synchronized boolean remove(Waiter waiter) {
        return held.removeIf(h -> h.waiter() == waiter);
    }

    /** Releases every held request now, each with a fresh pick: the router is stopping. */
    public synchronized void releaseAll() {
        releasing = true;
        try {
            while (!held.isEmpty()) {
                Held h = held.removeFirst();
                h.waiter().release(h.waiter().repick());
            }
        } finally {
            releasing = false;
            heldInRound.forEach(this::insertByDeadline);
            heldInRound.clear();
        }
    }

    /** Requests that have waited here, since the start. */
    public synchronized long heldTotal() {
        return heldTotal;
    }

    /** Requests waiting now. */
    public synchronized int size() {
        return held.size();
    }
}
