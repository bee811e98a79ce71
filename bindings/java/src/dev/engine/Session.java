package dev.engine;

import java.util.List;

/**
 * A context on a model: its tokens, KV cache and logits (engine_session_*).
 * One thread at a time evaluates on a session (another thread's call finds it
 * busy: EngineException, status BUSY); abort() is the exception, meant to be
 * called from another thread. Keeps its Model reachable; the Model cannot be
 * closed before its sessions.
 */
public final class Session extends NativeHandle {
  /** The KV cache's element type. */
  public enum KvType {
    F16,
    F32
  }

  /** engine_session_params; 0 leaves a value to the engine. */
  public static final class Params {
    int nCtx;
    int nBatch;
    KvType kvType = KvType.F16;
    int nThreads;
    String cpus;

    /** Context in tokens; 0: the model's training context, at most 4096. */
    public Params nCtx(int n) {
      nCtx = Native.unsigned("nCtx", n);
      return this;
    }

    /** Prompt tokens per prefill step; 0: 512. */
    public Params nBatch(int n) {
      nBatch = Native.unsigned("nBatch", n);
      return this;
    }

    public Params kvType(KvType type) {
      if (type == null) throw new IllegalArgumentException("kvType is null");
      kvType = type;
      return this;
    }

    /** Threads in all (the caller's included); 0: one per core of the fastest cluster(s). */
    public Params nThreads(int n) {
      nThreads = Native.unsigned("nThreads", n);
      return this;
    }

    /** The CPUs for the workers, such as "4-7"; null: the default placement. */
    public Params cpus(String list) {
      cpus = list;
      return this;
    }
  }

  private final Model model;
  private final long flag;  // the stop flag the session's abort callback reads

  public Session(Model model) {
    this(model, new Params());
  }

  public Session(Model model, Params params) {
    this(model, create(model, params));
  }

  private Session(Model model, long[] created) {
    super("Session", created[0]);
    this.model = model;
    this.flag = created[1];
  }

  private static long[] create(Model model, Params p) {
    long m = model.acquire();
    try {
      return Native.sessionCreate(m, p.nCtx, p.nBatch, p.kvType.ordinal(), p.nThreads, Native.utf8(p.cpus));
    } finally {
      model.release();
    }
  }

  @Override
  void free(long handle) {
    Native.sessionFree(handle, flag);
  }

  public Model model() {
    return model;
  }

  /**
   * From any thread: stops the evaluation under way (prefill, decode, a chat
   * turn's prefill or generate) at its next layer. That call throws
   * EngineException with status ABORTED; the session keeps the tokens of the
   * prefill batches completed whole, and the next call works from there.
   * Does nothing when nothing is evaluating, or once closed.
   */
  public synchronized void abort() {
    if (!isClosed()) Native.abort(flag);
  }

  /** Evaluates tokens after those the session holds. */
  public void prefill(int[] tokens) {
    long h = acquire();
    try {
      Native.prefill(h, flag, tokens);
    } finally {
      release();
    }
  }

  /**
   * Evaluates a whole prompt, reusing the session's tokens it begins with (their
   * KV cache) and dropping the rest; returns how many were reused.
   */
  public long prefillPrompt(int[] tokens) {
    long h = acquire();
    try {
      return Native.prefillPrompt(h, flag, tokens);
    } finally {
      release();
    }
  }

  /** Evaluates one token (a decode step). */
  public void decode(int token) {
    long h = acquire();
    try {
      Native.decode(h, flag, token);
    } finally {
      release();
    }
  }

  /** The last evaluated token's logits, a copy (nVocab floats). */
  public float[] logits() {
    return logits(null);
  }

  /**
   * The logits copied into dst (nVocab floats) to reuse one array per token;
   * returns dst. A copy, not a view: the engine's buffer is freed with the
   * session, and a view would let a read after close() crash the process.
   */
  public float[] logits(float[] dst) {
    if (dst != null && dst.length != model.nVocab()) {
      throw new IllegalArgumentException("logits: dst has " + dst.length + " floats, the model's vocabulary " + model.nVocab());
    }
    long h = acquire();
    try {
      return Native.logits(h, dst);
    } finally {
      release();
    }
  }

  /** The tokens the session holds. */
  public int nPast() {
    long h = acquire();
    try {
      return Native.nPast(h);
    } finally {
      release();
    }
  }

  /** Tokens evaluated over the session's life: reused ones are not counted, so prompt reuse shows here. */
  public long nEvaluated() {
    long h = acquire();
    try {
      return Native.nEvaluated(h);
    } finally {
      release();
    }
  }

  public int[] tokens() {
    long h = acquire();
    try {
      return Native.sessionTokens(h);
    } finally {
      release();
    }
  }

  /** Keeps the first n tokens (regenerate, edit). */
  public void truncate(int n) {
    long h = acquire();
    try {
      Native.truncate(h, Native.unsigned("n", n));
    } finally {
      release();
    }
  }

  public void reset() {
    long h = acquire();
    try {
      Native.reset(h);
    } finally {
      release();
    }
  }

  /** Saves the tokens and their KV cache (a prompt cache), through a temporary file and a rename. */
  public void save(String path) {
    long h = acquire();
    try {
      Native.save(h, Native.utf8(path));
    } finally {
      release();
    }
  }

  /**
   * Replaces the session's state by a saved one. A file of another model,
   * truncated or corrupt is refused (EngineException, status FILE) and the
   * session is unchanged.
   */
  public void load(String path) {
    long h = acquire();
    try {
      Native.load(h, Native.utf8(path));
    } finally {
      release();
    }
  }

  /** A chat turn's prompt, evaluating only what the session does not hold yet (engine_chat_prefill). */
  public ChatPrompt prefillChat(List<Message> messages, ChatOptions options) {
    Native.Messages m = new Native.Messages(messages);
    long h = acquire();
    try {
      long[] r = Native.prefillChat(h, flag, m.fields, m.callCounts, m.calls, options.strings());
      return new ChatPrompt(r[0], r[1]);
    } finally {
      release();
    }
  }

  /**
   * Generates after the session's tokens (engine_chat_generate) until an
   * end-of-generation token, a stop string, maxTokens (0: the context) or
   * onText returning false; onText (may be null) gets each piece.
   */
  public Reply generate(Sampler sampler, int maxTokens, List<String> stop, TextCallback onText) {
    return generateInto(sampler, maxTokens, stop, new Native.TextSink(onText));
  }

  Reply generateInto(Sampler sampler, int maxTokens, List<String> stop, Native.TextSink sink) {
    byte[][] stops = new byte[stop == null ? 0 : stop.size()][];
    for (int i = 0; i < stops.length; i++) stops[i] = Native.utf8(stop.get(i));
    Native.unsigned("maxTokens", maxTokens);
    long h = acquire();
    try {
      long s = sampler.acquire();
      try {
        int[] r = Native.generate(h, flag, s, maxTokens, stops, sink);
        if (sink.error != null) {
          throw new EngineException(EngineException.Status.CALLBACK, "the text callback threw " + sink.error, sink.error);
        }
        return new Reply(sink.text.toString(), r[0], Reply.Reason.values()[r[1]]);
      } finally {
        sampler.release();
      }
    } finally {
      release();
    }
  }
}
