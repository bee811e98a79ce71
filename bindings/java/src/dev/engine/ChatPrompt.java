package dev.engine;

/** What a chat turn's prefill did: the prompt's tokens, and those reused from the session (not evaluated again). */
public final class ChatPrompt {
  public final long nPrompt;
  public final long nReused;

  ChatPrompt(long nPrompt, long nReused) {
    this.nPrompt = nPrompt;
    this.nReused = nReused;
  }
}
