package dev.engine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The model the suites share, loaded once per test class: ENGINE_DEFAULT_MODEL (stories260K). */
abstract class WithModel {
  static final String MODEL = System.getenv("ENGINE_DEFAULT_MODEL");
  static Model model;

  @BeforeAll
  static void loadModel() {
    model = new Model(MODEL);
  }

  @AfterAll
  static void closeModel() {
    model.close();
  }
}
