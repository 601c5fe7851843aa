package dev.patchbay.router.pick;

import static org.assertj.core.api.Assertions.assertThat;

import dev.patchbay.router.scrape.EndpointMetrics;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RendezvousScorerTest {
    static List<EndpointState> servers(int n) {
        List<EndpointState> states = new ArrayList<>();
        for (int i = 0; i < n; i++)
            states.add(new EndpointState(new Endpoint("10.0.0." + i, 8000), EndpointMetrics.EMPTY));
        return states;
    }

    @Test
    void scoresFollowTheAdaptersRendezvousOrderWhateverTheCandidatesOrder() {
        List<EndpointState> states = servers(5);
        RendezvousScorer scorer = new RendezvousScorer();
        List<Endpoint> ranked = Rendezvous.rank(
                "sql", states.stream().map(EndpointState::endpoint).toList());
        for (long seed = 0; seed < 5; seed++) {
            List<EndpointState> shuffled = new ArrayList<>(states);
            Collections.shuffle(shuffled, new Random(seed));
            double[] scores = scorer.score(PickRequest.adapter("sql"), shuffled);
            for (int i = 0; i < shuffled.size(); i++) {
                int rank = ranked.indexOf(shuffled.get(i).endpoint());
                assertThat(scores[i]).isEqualTo(1.0 - rank / 4.0);
            }
        }
    }

    @Test
    void baseModelRequestsAndSingleCandidatesScoreZero() {
        RendezvousScorer scorer = new RendezvousScorer();
        assertThat(scorer.score(PickRequest.baseModel("base"), servers(3))).containsOnly(0.0);
        assertThat(scorer.score(PickRequest.adapter("sql"), servers(1))).containsOnly(0.0);
    }
}
