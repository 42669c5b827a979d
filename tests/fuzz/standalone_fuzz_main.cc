// A small stand-in for libFuzzer's driver, so that every fuzz target
// (LLVMFuzzerTestOneInput) also runs as an ordinary test under
// `bazel test //...`, built with the project's compiler and no sanitizer:
//
//   <target> [--runs=N] [--max_seconds=S] [--seed=K] [--max_len=L] PATH...
//
// It runs every file under PATH (files or folders: the seed corpus and the
// regression inputs of fixed crashes), then N inputs made from them by
// seeded random mutations (bit flips, byte sets, inserts, erases, copies,
// splices, truncations, interesting values), stopping early after S
// seconds. Deterministic for a given seed and corpus. A crash or a failed
// FUZZ_CHECK aborts; the input is then written to
// $TEST_UNDECLARED_OUTPUTS_DIR (else the current folder) as
// crash-<target>-<n> and its path printed, ready for tools/fuzz.sh or a
// rerun of this binary on that one file. Real, coverage-guided fuzzing with
// sanitizers: tools/fuzz.sh.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv)
    __attribute__((weak));

namespace {

// The input being run and where to save it if it crashes (set before each
// run; read only by the signal handler).
const std::string* g_current = nullptr;
char g_crash_path[4096];

void OnCrash(int sig) {
  if (g_current != nullptr) {
    const int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ssize_t ignored = write(fd, g_current->data(), g_current->size());
      (void)ignored;
      close(fd);
    }
    const char msg[] = "\nstandalone_fuzz_main: crashing input saved to ";
    ssize_t ignored = write(2, msg, sizeof(msg) - 1);
    ignored = write(2, g_crash_path, std::strlen(g_crash_path));
    ignored = write(2, "\n", 1);
    (void)ignored;
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

struct Options {
  long runs = 1000;
  double max_seconds = 30;
  uint64_t seed = 1;
  size_t max_len = 4096;
  std::vector<std::string> paths;
};

bool ParseFlag(const char* arg, const char* name, std::string* value) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  *value = arg + n + 1;
  return true;
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string v;
    if (ParseFlag(argv[i], "--runs", &v)) {
      o.runs = std::stol(v);
    } else if (ParseFlag(argv[i], "--max_seconds", &v)) {
      o.max_seconds = std::stod(v);
    } else if (ParseFlag(argv[i], "--seed", &v)) {
      o.seed = std::stoull(v);
    } else if (ParseFlag(argv[i], "--max_len", &v)) {
      o.max_len = std::stoul(v);
    } else if (argv[i][0] == '-') {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      std::exit(2);
    } else {
      o.paths.push_back(argv[i]);
    }
  }
  return o;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> LoadCorpus(const std::vector<std::string>& paths) {
  std::vector<std::filesystem::path> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else if (std::filesystem::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "no such corpus file or folder: %s\n", p.c_str());
      std::exit(2);
    }
  }
  std::sort(files.begin(), files.end());  // deterministic order
  std::vector<std::string> corpus;
  for (const auto& f : files) corpus.push_back(ReadFile(f));
  return corpus;
}

// Applies 1..8 random mutations to `in`.
std::string Mutate(std::string in, const std::vector<std::string>& corpus,
                   std::mt19937_64& rng, size_t max_len) {
  auto below = [&rng](size_t n) {
    return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n);
  };
  static const uint8_t kInteresting[] = {0x00, 0x01, 0x02, 0x04, 0x08,
                                         0x10, 0x3f, 0x40, 0x7f, 0x80,
                                         0x81, 0xfe, 0xff};
  const int n = 1 + static_cast<int>(below(8));
  for (int m = 0; m < n; ++m) {
    switch (below(9)) {
      case 0:  // flip a bit
        if (!in.empty()) in[below(in.size())] ^= 1 << below(8);
        break;
      case 1:  // set a random byte
        if (!in.empty()) in[below(in.size())] = static_cast<char>(rng());
        break;
      case 2:  // set an interesting byte
        if (!in.empty()) {
          in[below(in.size())] =
              static_cast<char>(kInteresting[below(sizeof(kInteresting))]);
        }
        break;
      case 3: {  // insert random bytes
        const size_t k = 1 + below(8);
        std::string bytes(k, '\0');
        for (char& c : bytes) c = static_cast<char>(rng());
        in.insert(below(in.size() + 1), bytes);
        break;
      }
      case 4:  // erase a range
        if (!in.empty()) {
          const size_t at = below(in.size());
          in.erase(at, 1 + below(std::min<size_t>(16, in.size() - at)));
        }
        break;
      case 5:  // copy a range elsewhere
        if (!in.empty()) {
          const size_t at = below(in.size());
          const std::string piece =
              in.substr(at, 1 + below(std::min<size_t>(32, in.size() - at)));
          in.insert(below(in.size() + 1), piece);
        }
        break;
      case 6:  // splice with another corpus entry
        if (!corpus.empty()) {
          const std::string& other = corpus[below(corpus.size())];
          in = in.substr(0, below(in.size() + 1)) +
               other.substr(below(other.size() + 1));
        }
        break;
      case 7:  // truncate
        in.resize(below(in.size() + 1));
        break;
      case 8:  // overwrite 8 bytes with an extreme 64-bit value
        if (in.size() >= 8) {
          const uint64_t values[] = {0, ~0ull, 1ull << 63, (1ull << 63) - 1,
                                     1ull << 32, 1ull << 62};
          const uint64_t v = values[below(6)];
          std::memcpy(&in[below(in.size() - 7)], &v, 8);
        }
        break;
    }
  }
  if (in.size() > max_len) in.resize(max_len);
  return in;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  const std::string target = std::filesystem::path(argv[0]).filename();
  const char* out = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, OnCrash);

  const std::vector<std::string> corpus = LoadCorpus(o.paths);
  std::mt19937_64 rng(o.seed);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&start] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  long ran = 0;
  auto run = [&](const std::string& input) {
    std::snprintf(g_crash_path, sizeof(g_crash_path), "%s/crash-%s-%ld",
                  out != nullptr ? out : ".", target.c_str(), ran);
    g_current = &input;
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()),
                           input.size());
    g_current = nullptr;
    ++ran;
  };
  for (const std::string& seed : corpus) run(seed);
  const long seeds = ran;
  for (long i = 0; i < o.runs && elapsed() < o.max_seconds; ++i) {
    const std::string base =
        corpus.empty() ? std::string() : corpus[rng() % corpus.size()];
    run(Mutate(base, corpus, rng, o.max_len));
  }
  std::printf("%s: ran %ld inputs (%ld corpus files, %ld mutated) in %.1f s, "
              "seed %llu, no crash\n",
              target.c_str(), ran, seeds, ran - seeds, elapsed(),
              static_cast<unsigned long long>(o.seed));
  return 0;
}
