package dev.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Java binding's Session and Sampler: evaluation, streaming, cancellation, saved sessions, closing. */
class SessionTest extends WithModel {
  static int argmax(float[] v) {
    int best = 0;
    for (int i = 1; i < v.length; i++) {
      if (v[i] > v[best]) best = i;
    }
    return best;
  }

  @Test
  void generateStreamsWhatAGreedyLoopOverTheLogitsGives() {
    int[] prompt = model.tokenize("Once upon a time");
    // The loop by hand: the most likely token each step, its bytes, decoded.
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    try (Session s = new Session(model, new Session.Params().nCtx(256))) {
      s.prefill(prompt);
      float[] logits = new float[model.nVocab()];
      for (int i = 0; i < 40; i++) {
        int t = argmax(s.logits(logits));
        if (model.isEndOfGeneration(t)) break;
        expected.write(model.tokenBytes(t), 0, model.tokenBytes(t).length);
        s.decode(t);
      }
    }
    List<String> pieces = new ArrayList<String>();
    try (Session s = new Session(model, new Session.Params().nCtx(256));
        Sampler greedy = new Sampler(Sampler.Params.greedy())) {
      assertEquals(0, s.prefillPrompt(prompt));
      Reply reply = s.generate(greedy, 40, null, piece -> pieces.add(piece));
      assertTrue(pieces.size() > 5);
      assertEquals(String.join("", pieces), reply.text);
      assertEquals(new String(expected.toByteArray(), StandardCharsets.UTF_8), reply.text);
      assertEquals(Reply.Reason.MAX_TOKENS, reply.reason);
      assertEquals(prompt.length + 40, s.nPast());
    }
  }

  @Test
  void theCallbackStopsTheReplyByReturningFalse() {
    try (Session s = new Session(model, new Session.Params().nCtx(256)); Sampler greedy = new Sampler(Sampler.Params.greedy())) {
      s.prefill(model.tokenize("Once upon a time"));
      List<String> pieces = new ArrayList<String>();
      Reply reply = s.generate(greedy, 100, null, piece -> pieces.add(piece) && false);
      assertEquals(Reply.Reason.CALLBACK, reply.reason);
      assertEquals(1, pieces.size());
      assertEquals(pieces.get(0), reply.text);
    }
  }

  @Test
  void anExceptionInTheCallbackIsTheCauseAndTheSessionStillWorks() {
    try (Session s = new Session(model, new Session.Params().nCtx(256)); Sampler greedy = new Sampler(Sampler.Params.greedy())) {
      s.prefill(model.tokenize("Once"));
      IllegalStateException boom = new IllegalStateException("from the callback");
      EngineException e = assertThrows(EngineException.class, () -> s.generate(greedy, 20, null, piece -> {
        throw boom;
      }));
      assertEquals(EngineException.Status.CALLBACK, e.status());
      assertSame(boom, e.getCause());
      assertFalse(s.generate(greedy, 5, null, null).text.isEmpty());
    }
  }

  static String sampled(Sampler.Params params) {
    try (Session s = new Session(model, new Session.Params().nCtx(256)); Sampler sampler = new Sampler(params)) {
      s.prefill(model.tokenize("Once"));
      return s.generate(sampler, 30, null, null).text;
    }
  }

  @Test
  void aSeededSamplerRepeatsItsTextAndTheSeedChangesIt() {
    String a = sampled(new Sampler.Params().temperature(0.9f).seed(7));
    assertEquals(a, sampled(new Sampler.Params().temperature(0.9f).seed(7)));
    assertFalse(a.equals(sampled(new Sampler.Params().temperature(0.9f).seed(0xFFFFFFFEL))));
    assertThrows(IllegalArgumentException.class, () -> new Sampler.Params().seed(1L << 32));
  }

  @Test
  void sessionsOnOneModelInTwoThreadsAgree() throws InterruptedException {
    String[] texts = new String[2];
    Thread[] threads = new Thread[2];
    for (int i = 0; i < 2; i++) {
      final int k = i;
      threads[i] = new Thread(() -> texts[k] = sampled(Sampler.Params.greedy()));
      threads[i].start();
    }
    for (Thread t : threads) t.join();
    assertFalse(texts[0].isEmpty());
    assertEquals(texts[0], texts[1]);
    assertEquals(sampled(Sampler.Params.greedy()), texts[0]);
  }

  @Test
  void stopStringsEndTheReplyBeforeThem() {
    String full;
    try (Session s = new Session(model, new Session.Params().nCtx(256)); Sampler greedy = new Sampler(Sampler.Params.greedy())) {
      s.prefill(model.tokenize("Once upon a time"));
      full = s.generate(greedy, 60, null, null).text;
    }
    String stop = full.contains(" she") ? " she" : ",";
    try (Session s = new Session(model, new Session.Params().nCtx(256)); Sampler greedy = new Sampler(Sampler.Params.greedy())) {
      s.prefill(model.tokenize("Once upon a time"));
      Reply reply = s.generate(greedy, 60, Collections.singletonList(stop), null);
      assertEquals(full.substring(0, full.indexOf(stop)), reply.text);
      assertEquals(Reply.Reason.STOP_STRING, reply.reason);
    }
  }

  @Test
  void aSecondPromptEvaluatesOnlyItsNewTokens() {
    try (Session s = new Session(model, new Session.Params().nCtx(256))) {
      int[] first = model.tokenize("Once upon a time, there was a cat.");
      assertEquals(0, s.prefillPrompt(first));
      assertEquals(first.length, s.nEvaluated());
      int[] more = model.tokenize(" The cat was happy.", false, false);
      int[] second = Arrays.copyOf(first, first.length + more.length);
      System.arraycopy(more, 0, second, first.length, more.length);
      long before = s.nEvaluated();
      assertEquals(first.length, s.prefillPrompt(second));
      assertEquals(more.length, s.nEvaluated() - before);
      s.truncate(first.length);
      assertArrayEquals(first, s.tokens());
    }
  }

  @Test
  void logitsAreCopiesOfTheRightSize() {
    try (Session s = new Session(model, new Session.Params().nCtx(64))) {
      EngineException none = assertThrows(EngineException.class, s::logits);
      assertEquals(EngineException.Status.STATE, none.status());
      s.prefill(model.tokenize("Once upon"));
      float[] a = s.logits();
      assertEquals(model.nVocab(), a.length);
      float[] b = new float[model.nVocab()];
      assertSame(b, s.logits(b));
      assertArrayEquals(a, b);
      assertThrows(IllegalArgumentException.class, () -> s.logits(new float[3]));
      EngineException bad = assertThrows(EngineException.class, () -> s.decode(model.nVocab()));
      assertEquals(EngineException.Status.INVALID_ARGUMENT, bad.status());
      assertTrue(bad.getMessage().contains("outside the vocabulary"), bad.getMessage());
    }
  }

  @Test
  void abortFromAnotherThreadStopsAPrefillAtAWholeBatch() throws InterruptedException {
    try (Session s = new Session(model, new Session.Params().nCtx(2048).nBatch(8).nThreads(1))) {
      int[] prompt = new int[2001];
      prompt[0] = model.bos();
      for (int i = 1; i < prompt.length; i++) prompt[i] = (i * 37) % 500 + 3;
      AtomicBoolean done = new AtomicBoolean();
      Thread stopper = new Thread(() -> {
        while (!done.get()) s.abort();
      });
      stopper.start();
      EngineException aborted = null;
      try {
        // A few tries: on a loaded machine the stopper may not get a core
        // before a whole prefill (tens of milliseconds here) is done.
        for (int attempt = 0; attempt < 5 && aborted == null; attempt++) {
          s.reset();
          try {
            s.prefill(prompt);
          } catch (EngineException e) {
            aborted = e;
          }
        }
      } finally {
        done.set(true);
        stopper.join();
      }
      assertNotNull(aborted, "no prefill was stopped");
      assertEquals(EngineException.Status.ABORTED, aborted.status(), aborted.getMessage());
      int kept = s.nPast();
      assertTrue(kept < prompt.length && kept % 8 == 0, "kept " + kept);
      s.prefill(new int[] {5});  // the next call works, after the kept tokens
      assertEquals(kept + 1, s.nPast());
    }
  }

  @Test
  void savedSessionsRestoreThePrompt(@TempDir Path dir) throws IOException {
    int[] prompt = model.tokenize("Lily liked to play in the park with her friends.");
    String path = dir.resolve("prompt.session").toString();
    float[] want;
    try (Session s = new Session(model, new Session.Params().nCtx(128))) {
      s.prefill(prompt);
      want = s.logits();
      s.save(path);
    }
    try (Session restored = new Session(model, new Session.Params().nCtx(128))) {
      restored.load(path);
      assertArrayEquals(prompt, restored.tokens());
      long before = restored.nEvaluated();
      assertEquals(prompt.length - 1, restored.prefillPrompt(prompt));  // the last token again, for its logits
      assertEquals(1, restored.nEvaluated() - before);
      assertArrayEquals(want, restored.logits(), 1e-5f);
      File other = dir.resolve("other").toFile();
      try (FileOutputStream out = new FileOutputStream(other)) {
        out.write(new byte[100]);
      }
      EngineException e = assertThrows(EngineException.class, () -> restored.load(other.getPath()));
      assertEquals(EngineException.Status.FILE, e.status());
      assertTrue(e.getMessage().contains("not a saved session"), e.getMessage());
      assertArrayEquals(prompt, restored.tokens());  // unchanged
    }
  }

  @Test
  void useAfterCloseIsAClearExceptionAndCloseDuringACallIsRefused() {
    Session s = new Session(model, new Session.Params().nCtx(64));
    Sampler sampler = new Sampler();
    s.prefill(model.tokenize("Once"));
    // From the text callback, the session is inside generate: closing it then
    // would free what the call uses, so it is refused.
    EngineException[] refused = new EngineException[1];
    s.generate(sampler, 5, null, piece -> {
      try {
        s.close();
      } catch (EngineException e) {
        refused[0] = e;
      }
      return false;
    });
    assertNotNull(refused[0]);
    assertEquals(EngineException.Status.BUSY, refused[0].status());
    s.decode(model.tokenize("a", false, false)[0]);  // still open
    s.close();
    s.close();
    s.abort();  // nothing to stop: no error
    IllegalStateException e = assertThrows(IllegalStateException.class, s::nPast);
    assertEquals("Session is closed", e.getMessage());
    assertThrows(IllegalStateException.class, () -> sampler.sample(s));
    sampler.close();
    assertThrows(IllegalStateException.class, () -> sampler.accept(1));
  }
}
