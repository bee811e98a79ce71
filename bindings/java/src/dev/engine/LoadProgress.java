package dev.engine;

/**
 * Told how a model load goes (engine_model_load_ex): the fraction done (0 to 1,
 * never decreasing, 1 once at the end) and the phase ("reading", "repacking",
 * "mapping cache", "writing cache", "done"), at least once per tensor, on the
 * thread that constructs the Model.
 */
@FunctionalInterface
public interface LoadProgress {
  /** Returns false to cancel the load (EngineException, status CANCELLED). An exception cancels it too and is thrown by the constructor. */
  boolean onProgress(float fraction, String phase);
}
