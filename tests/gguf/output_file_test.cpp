// Outputs never destroy what they were not asked to make (gguf/writer_output.h):
// an existing output path that is a FIFO, a device node or a directory is
// refused and left as it was; a symbolic link is written through to its
// target and stays a link; a dangling or looping link is refused; the
// temporary file sits beside the target and is gone after every failure.
// Driven through gguf::Writer::write (what quantize and synth call) and
// gguf::write_output_file (bench reports and charts, run's dumped logits).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "gguf/writer_output.h"
#include "tests/support/shared_data.h"

namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

// A one-tensor model; `during` runs while its data is being written.
gguf::Writer small_model(std::function<void()> during = {}) {
  gguf::Writer w;
  w.set_string("general.architecture", "llama");
  const std::vector<uint64_t> ne = {8};
  w.add_tensor("w", gguf::GgmlType::F32, ne, [during](gguf::TensorSink& sink) {
    if (during) during();
    const std::vector<float> x(8, 1.0f);
    sink.write(x.data(), x.size() * sizeof(float));
  });
  return w;
}

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = engine_test::temp_dir("gguf-output"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path at(const std::string& name) const { return dir_ / name; }
  // Names in `dir` (default: the test's folder), sorted.
  std::vector<std::string> names(const fs::path& dir = {}) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir.empty() ? dir_ : dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  // The error of writing a model to `path`; "" when it was written.
  static std::string write_error(const fs::path& path) {
    try {
      small_model().write(path.string());
    } catch (const gguf::Error& e) {
      return e.what();
    }
    return "";
  }
  static bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
  fs::path dir_;
};

TEST_F(OutputFile, RefusesAFifoAndLeavesIt) {
  const fs::path fifo = at("out.gguf");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const std::string error = write_error(fifo);
  EXPECT_TRUE(has(error, fifo.string() + ": is a FIFO (named pipe), not a regular file: refusing to replace it"))
      << error;
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(fifo)));
  EXPECT_EQ(names(), std::vector<std::string>{"out.gguf"}) << "a temporary file was left behind";
}

TEST_F(OutputFile, RefusesACharacterDeviceAndLeavesIt) {
  // The node of /dev/full (1, 7), made in the test's folder: renaming over it
  // is what turned /dev/full into a regular file.
  const fs::path dev = at("full");
  if (::mknod(dev.c_str(), S_IFCHR | 0600, makedev(1, 7)) != 0) {
    GTEST_SKIP() << "cannot make a device node here (mknod: " << std::strerror(errno) << "; needs root)";
  }
  const std::string error = write_error(dev);
  EXPECT_TRUE(has(error, dev.string() + ": is a character device, not a regular file")) << error;
  EXPECT_TRUE(fs::is_character_file(fs::symlink_status(dev)));
  EXPECT_EQ(names(), std::vector<std::string>{"full"});
  // The same through the whole-file writer bench and run use.
  EXPECT_THROW(gguf::write_output_file(dev.string(), "report"), gguf::Error);
  EXPECT_TRUE(fs::is_character_file(fs::symlink_status(dev)));
  EXPECT_EQ(names(), std::vector<std::string>{"full"});
}

TEST_F(OutputFile, RefusesADirectoryAndLeavesItsContents) {
  const fs::path dir = at("out.gguf");
  fs::create_directory(dir);
  write_text(dir / "keep.txt", "mine");
  const std::string error = write_error(dir);
  EXPECT_TRUE(has(error, dir.string() + ": is a directory, not a regular file")) << error;
  EXPECT_EQ(read_text(dir / "keep.txt"), "mine");
  EXPECT_EQ(names(), std::vector<std::string>{"out.gguf"});
  EXPECT_THROW(gguf::write_output_file(dir.string() + "/", "x"), gguf::Error);
}

TEST_F(OutputFile, WritesThroughASymlinkAndKeepsTheLink) {
  const fs::path real = at("real.gguf"), link = at("link.gguf");
  write_text(real, "old contents");
  fs::create_symlink("real.gguf", link);
  EXPECT_EQ(write_error(link), "");
  ASSERT_TRUE(fs::is_symlink(link)) << "the link was replaced by a file";
  EXPECT_EQ(fs::read_symlink(link), "real.gguf");
  const gguf::File f = gguf::File::open(real.string());
  EXPECT_EQ(f.tensors().size(), 1u);
  EXPECT_EQ(names(), (std::vector<std::string>{"link.gguf", "real.gguf"}));

  gguf::write_output_file(link.string(), "a report\n");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read_text(real), "a report\n");
}

TEST_F(OutputFile, FollowsAChainOfLinksToTheFinalTarget) {
  fs::create_directory(at("a"));
  fs::create_directory(at("b"));
  write_text(at("b/real.txt"), "old");
  fs::create_symlink("../b/real.txt", at("a/one"));
  fs::create_symlink("a/one", at("two"));
  gguf::write_output_file(at("two").string(), "new");
  EXPECT_TRUE(fs::is_symlink(at("two")));
  EXPECT_TRUE(fs::is_symlink(at("a/one")));
  EXPECT_EQ(read_text(at("b/real.txt")), "new");
  EXPECT_EQ(names(at("a")), std::vector<std::string>{"one"});
  EXPECT_EQ(names(at("b")), std::vector<std::string>{"real.txt"});
}

TEST_F(OutputFile, PutsTheTemporaryFileBesideTheLinksTarget) {
  // The link in one folder, its target in another: a rename from the link's
  // folder would replace the link (or fail across file systems).
  fs::create_directory(at("links"));
  fs::create_directory(at("models"));
  write_text(at("models/real.gguf"), "old");
  fs::create_symlink("../models/real.gguf", at("links/out.gguf"));
  std::vector<std::string> in_links, in_models;
  small_model([&] {
    in_links = names(at("links"));
    in_models = names(at("models"));
  }).write(at("links/out.gguf").string());
  EXPECT_EQ(in_links, std::vector<std::string>{"out.gguf"});
  ASSERT_EQ(in_models.size(), 2u);
  EXPECT_EQ(in_models[0], "real.gguf");
  EXPECT_EQ(in_models[1].rfind("real.gguf.tmp-", 0), 0u) << in_models[1];
  EXPECT_EQ(names(at("models")), std::vector<std::string>{"real.gguf"});
}

TEST_F(OutputFile, AFailureThroughALinkKeepsTargetAndLinkAndLeavesNoTemporaryFile) {
  write_text(at("real.gguf"), "old contents");
  fs::create_symlink("real.gguf", at("link.gguf"));
  gguf::Writer w = small_model([] { throw std::runtime_error("interrupted"); });
  EXPECT_THROW(w.write(at("link.gguf").string()), std::runtime_error);
  EXPECT_TRUE(fs::is_symlink(at("link.gguf")));
  EXPECT_EQ(read_text(at("real.gguf")), "old contents");
  EXPECT_EQ(names(), (std::vector<std::string>{"link.gguf", "real.gguf"}));
}

TEST_F(OutputFile, RefusesADanglingLinkAndCreatesNothing) {
  fs::create_symlink("missing.gguf", at("link.gguf"));
  const std::string error = write_error(at("link.gguf"));
  EXPECT_TRUE(has(error, "link.gguf: is a symbolic link to 'missing.gguf', which does not exist")) << error;
  EXPECT_TRUE(fs::is_symlink(at("link.gguf")));
  EXPECT_EQ(names(), std::vector<std::string>{"link.gguf"});
}

TEST_F(OutputFile, RefusesALinkToAFifoOrADirectoryOrALoop) {
  ASSERT_EQ(::mkfifo(at("fifo").c_str(), 0600), 0);
  fs::create_directory(at("dir"));
  fs::create_symlink("fifo", at("to-fifo"));
  fs::create_symlink("dir", at("to-dir"));
  fs::create_symlink("loop-b", at("loop-a"));
  fs::create_symlink("loop-a", at("loop-b"));
  std::string error = write_error(at("to-fifo"));
  EXPECT_TRUE(has(error, "to-fifo: is a symbolic link to '" + fs::canonical(dir_).string() +
                             "/fifo', which is a FIFO (named pipe), not a regular file"))
      << error;
  error = write_error(at("to-dir"));
  EXPECT_TRUE(has(error, "/dir', which is a directory, not a regular file")) << error;
  error = write_error(at("loop-a"));
  EXPECT_TRUE(has(error, "loop-a: is a symbolic link that loops")) << error;
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(at("fifo"))));
  EXPECT_TRUE(fs::is_symlink(at("to-fifo")));
  EXPECT_TRUE(fs::is_symlink(at("to-dir")));
  EXPECT_EQ(names(), (std::vector<std::string>{"dir", "fifo", "loop-a", "loop-b", "to-dir", "to-fifo"}));
  EXPECT_TRUE(names(at("dir")).empty());
}

TEST_F(OutputFile, NamesAMissingFolder) {
  const std::string error = write_error(at("nowhere/out.gguf"));
  EXPECT_TRUE(has(error, "out.gguf: cannot write there: the folder '" + at("nowhere").string() + "' does not exist"))
      << error;
}

TEST_F(OutputFile, ReplacesARegularFileKeepingItsPermissions) {
  write_text(at("report.json"), "old");
  fs::permissions(at("report.json"), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  gguf::write_output_file(at("report.json").string(), "new");
  EXPECT_EQ(read_text(at("report.json")), "new");
  EXPECT_EQ(fs::status(at("report.json")).permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  gguf::write_output_file(at("fresh.json").string(), "{}");
  EXPECT_EQ(fs::status(at("fresh.json")).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  EXPECT_EQ(names(), (std::vector<std::string>{"fresh.json", "report.json"}));
}

TEST_F(OutputFile, AnUncommittedFileLeavesNothing) {
  {
    gguf::OutputFile out(at("partial.bin").string());
    out.write("abc", 3);
    EXPECT_EQ(names().size(), 1u);  // the temporary file
  }
  EXPECT_TRUE(names().empty());
}

}  // namespace
