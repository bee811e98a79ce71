package dev.engine;

/** A generated reply: its text (without a stop string), the tokens evaluated, and why it ended. */
public final class Reply {
  /** Why a reply ended (engine_chat_stop_reason). */
  public enum Reason {
    END_OF_GENERATION,
    STOP_STRING,
    MAX_TOKENS,
    CALLBACK,
    CONTEXT_FULL
  }

  public final String text;
  public final int nTokens;
  public final Reason reason;

  Reply(String text, int nTokens, Reason reason) {
    this.text = text;
    this.nTokens = nTokens;
    this.reason = reason;
  }

  @Override
  public String toString() {
    return text;
  }
}
