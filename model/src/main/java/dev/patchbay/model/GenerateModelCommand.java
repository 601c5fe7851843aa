package dev.patchbay.model;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Writes a random Llama-family model and PEFT adapters for it, in the real file formats. */
@Command(
        name = "generate-model",
        mixinStandardHelpOptions = true,
        description = "Writes a random Llama-family model (config.json, model.safetensors, tokenizer.json, "
                + "tokenizer_config.json) and LoRA adapters for it (adapters/adapter-N).")
public final class GenerateModelCommand implements Callable<Integer> {
    @Option(names = "--output", required = true, description = "Directory to write the model into.")
    Path output;

    @Option(
            names = "--architecture",
            defaultValue = "LlamaForCausalLM",
            description = "LlamaForCausalLM, MistralForCausalLM or Qwen2ForCausalLM (default: ${DEFAULT-VALUE}).")
    String architecture;

    @Option(names = "--hidden", defaultValue = "64", description = "Hidden size (default: ${DEFAULT-VALUE}).")
    int hidden;

    @Option(names = "--layers", defaultValue = "2", description = "Decoder layers (default: ${DEFAULT-VALUE}).")
    int layers;

    @Option(names = "--heads", defaultValue = "4", description = "Attention heads (default: ${DEFAULT-VALUE}).")
    int heads;

    @Option(names = "--kv-heads", defaultValue = "2", description = "Key/value heads (default: ${DEFAULT-VALUE}).")
    int kvHeads;

    @Option(names = "--intermediate", defaultValue = "128", description = "MLP size (default: ${DEFAULT-VALUE}).")
    int intermediate;

    @Option(names = "--vocab", defaultValue = "400", description = "Vocabulary rows (default: ${DEFAULT-VALUE}).")
    int vocab;

    @Option(names = "--dtype", defaultValue = "F32", description = "F32, F16 or BF16 (default: ${DEFAULT-VALUE}).")
    String dtype;

    @Option(names = "--tie-embeddings", description = "Share the embedding matrix with the output head.")
    boolean tieEmbeddings;

    @Option(names = "--seed", defaultValue = "7", description = "Random seed (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(
            names = "--adapters",
            defaultValue = "0",
            description = "LoRA adapters to write (default: ${DEFAULT-VALUE}).")
    int adapters;

    @Option(names = "--rank", defaultValue = "8", description = "LoRA rank (default: ${DEFAULT-VALUE}).")
    int rank;

    @Option(names = "--alpha", defaultValue = "16", description = "LoRA alpha (default: ${DEFAULT-VALUE}).")
    double alpha;

    @Option(
            names = "--target-modules",
            split = ",",
            defaultValue = "q_proj,v_proj",
            description = "Projections the adapters adapt (default: ${DEFAULT-VALUE}).")
    List<String> targetModules;

    @Override
    public Integer call() throws Exception {
        ModelGenerator.Spec spec = new ModelGenerator.Spec(
                architecture,
                hidden,
                layers,
                heads,
                kvHeads,
                intermediate,
                vocab,
                dtype.toUpperCase(),
                seed,
                tieEmbeddings,
                null);
        ModelGenerator.writeModel(output, spec);
        System.out.println("Wrote model " + output);
        for (int i = 0; i < adapters; i++) {
            Path dir = output.resolve("adapters").resolve("adapter-" + i);
            ModelGenerator.writeAdapter(dir, spec, rank, alpha, targetModules, seed + 1000 + i);
            System.out.println("Wrote adapter " + dir);
        }
        return 0;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new GenerateModelCommand()).execute(args));
    }
}
