package dev.patchbay.router.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ModelRewriterTest {
    private static final ModelRewrite ROLLOUT = new ModelRewrite(
            "food-review",
            List.of(new ModelRewrite.Target("food-review-1", 90), new ModelRewrite.Target("food-review-2", 10)));

    @Test
    void spreadsRequestsByWeight() {
        ModelRewriter rewriter = new ModelRewriter(List.of(ROLLOUT), new Random(1234));
        Map<String, Integer> counts = new HashMap<>();
        int draws = 20_000;
        for (int i = 0; i < draws; i++) {
            counts.merge(rewriter.rewrite("food-review"), 1, Integer::sum);
        }
        assertThat(counts).containsOnlyKeys("food-review-1", "food-review-2");
        // 10% of 20000 = 2000, standard deviation ~42: six sigmas either side
        assertThat(counts.get("food-review-2")).isBetween(1750, 2250);
    }

    @Test
    void sameSeedSameDraws() {
        ModelRewriter a = new ModelRewriter(List.of(ROLLOUT), new Random(9));
        ModelRewriter b = new ModelRewriter(List.of(ROLLOUT), new Random(9));
        for (int i = 0; i < 100; i++) {
            assertThat(a.rewrite("food-review")).isEqualTo(b.rewrite("food-review"));
        }
    }

    @Test
    void otherModelsPassUnchanged() {
        ModelRewriter rewriter = new ModelRewriter(List.of(ROLLOUT), new Random(1));
        assertThat(rewriter.rewrite("food-review-1")).isEqualTo("food-review-1");
        assertThat(rewriter.isSource("food-review")).isTrue();
        assertThat(rewriter.isSource("food-review-1")).isFalse();
        assertThat(rewriter.targets()).containsExactlyInAnyOrder("food-review-1", "food-review-2");
    }

    @Test
    void badRewritesAreRejected() {
        assertThatThrownBy(() -> new ModelRewrite("x", List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ModelRewrite("x", List.of(new ModelRewrite.Target("y", 0))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ModelRewriter(List.of(ROLLOUT, ROLLOUT), new Random(1)))
                .hasMessageContaining("two rewrites");
    }
}
