package dev.engine;

/** Picks tokens from a session's logits (engine_sampler_*). One thread at a time. */
public final class Sampler extends NativeHandle {
  /** engine_sampler_params; the defaults are the engine's. */
  public static final class Params {
    private static final double[] DEFAULTS = Native.samplerDefaults();
    float temperature = (float) DEFAULTS[0];
    int topK = (int) DEFAULTS[1];
    float topP = (float) DEFAULTS[2];
    float minP = (float) DEFAULTS[3];
    float repeatPenalty = (float) DEFAULTS[4];
    int repeatLastN = (int) DEFAULTS[5];
    long seed = (long) DEFAULTS[6];

    /** The greedy sampler: always the most likely token. */
    public static Params greedy() {
      return new Params().temperature(0);
    }

    /** <= 0: greedy. */
    public Params temperature(float t) {
      temperature = t;
      return this;
    }

    /** <= 0: off. */
    public Params topK(int k) {
      topK = k;
      return this;
    }

    /** >= 1: off. */
    public Params topP(float p) {
      topP = p;
      return this;
    }

    /** <= 0: off. */
    public Params minP(float p) {
      minP = p;
      return this;
    }

    /** 1: off. */
    public Params repeatPenalty(float penalty) {
      repeatPenalty = penalty;
      return this;
    }

    public Params repeatLastN(int n) {
      repeatLastN = n;
      return this;
    }

    /** 0 to 0xFFFFFFFF; 0xFFFFFFFF: a random seed. */
    public Params seed(long s) {
      if (s < 0 || s > 0xFFFFFFFFL) throw new IllegalArgumentException("seed must be in 0..0xFFFFFFFF, not " + s);
      seed = s;
      return this;
    }
  }

  public Sampler() {
    this(new Params());
  }

  public Sampler(Params p) {
    super("Sampler", Native.samplerCreate(p.temperature, p.topK, p.topP, p.minP, p.repeatPenalty, p.repeatLastN,
        (int) p.seed));
  }

  @Override
  void free(long handle) {
    Native.samplerFree(handle);
  }

  /** Picks the next token from the session's current logits and records it. */
  public int sample(Session session) {
    long h = acquire();
    try {
      long s = session.acquire();
      try {
        return Native.sample(h, s);
      } finally {
        session.release();
      }
    } finally {
      release();
    }
  }

  /** Records a context token (the prompt's) for the repetition penalty. */
  public void accept(int token) {
    long h = acquire();
    try {
      Native.samplerAccept(h, token);
    } finally {
      release();
    }
  }

  /**
   * Samples only text of this GBNF grammar (start rule "root") over the model's tokens; each reply ends when it is
   * complete (engine_sampler_set_grammar). A grammar that does not parse throws EngineException naming the line
   * and column.
   */
  public void setGrammar(Model model, String gbnf) {
    setGrammar(model, gbnf, "root");
  }

  public void setGrammar(Model model, String gbnf, String root) {
    withModel(model, (h, m) -> Native.samplerSetGrammar(h, m, Native.utf8(gbnf), Native.utf8(root), false));
  }

  /** Samples only JSON documents the schema (JSON text) validates (engine_sampler_set_json_schema). */
  public void setJsonSchema(Model model, String schema) {
    withModel(model, (h, m) -> Native.samplerSetGrammar(h, m, Native.utf8(schema), null, true));
  }

  /**
   * The reply must be one call of one of the tools (a JSON array of OpenAI function tools), in the tool-call format
   * of the model's template (format null) or the one named, its arguments valid under the tool's schema
   * (engine_sampler_set_tool_grammar); Model.parseToolCalls reads it back.
   */
  public void setToolGrammar(Model model, String tools, String format) {
    withModel(model, (h, m) -> Native.samplerSetToolGrammar(h, m, Native.utf8(tools),
        format == null ? null : Native.utf8(format)));
  }

  /** Removes the grammar. */
  public void clearGrammar() {
    long h = acquire();
    try {
      Native.samplerSetGrammar(h, 0, null, null, false);
    } finally {
      release();
    }
  }

  private interface WithHandles {
    void run(long sampler, long model);
  }

  private void withModel(Model model, WithHandles body) {
    long h = acquire();
    try {
      long m = model.acquire();
      try {
        body.run(h, m);
      } finally {
        model.release();
      }
    } finally {
      release();
    }
  }
}
