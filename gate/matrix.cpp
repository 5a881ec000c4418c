// Library code for `flce matrix`: rows (case, subject), columns (venvs), one worker per column.
#include "gate/matrix.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "judge/expectations.hpp"
#include "judge/signature.hpp"
#include "oracles/subject_worker.hpp"
#include "report/markdown.hpp"

namespace flce {

namespace fs = std::filesystem;

std::vector<MatrixRow> matrix_rows_from_corpus(const std::string& file) {
  std::vector<MatrixRow> rows;
  for (auto& p : load_expectations(file)) {
    MatrixRow r;
    r.id = p.pin.case_file;
    r.subject = p.pin.subject;
    r.c = p.calls.last();
    for (auto& x : p.pin.expect) r.expect.push_back({x.torch, x.device, x.outcome});
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<MatrixRow> matrix_rows_from_files(const std::vector<std::string>& files, const std::vector<std::string>& subjects) {
  std::vector<MatrixRow> rows;
  for (auto& f : files) {
    Case c = from_json_file(f);
    std::vector<std::string> subs = subjects;
    if (subs.empty()) subs = {c.is_op() ? "aten-dtype-out" : "model"};
    for (auto& s : subs) rows.push_back({f, s, c, {}});
  }
  return rows;
}

void add_workaround_rows(std::vector<MatrixRow>& rows) {
  const std::string suffix = "+workaround";
  std::vector<MatrixRow> out;
  for (auto& r : rows) {
    out.push_back(r);
    bool has = r.subject.size() > suffix.size() && r.subject.compare(r.subject.size() - suffix.size(), suffix.size(), suffix) == 0;
    if (!has) out.push_back({r.id, r.subject + suffix, r.c, {}});
  }
  rows = std::move(out);
}

std::vector<MatrixEnv> envs_from_dir(const std::string& dir) {
  std::vector<MatrixEnv> envs;
  if (!fs::is_directory(dir)) return envs;
  for (auto& e : fs::directory_iterator(dir)) {
    fs::path py = e.path() / "bin" / "python";
    if (fs::exists(py)) envs.push_back({e.path().filename().string(), py.string()});
  }
  std::sort(envs.begin(), envs.end(), [](auto& a, auto& b) { return a.label < b.label; });
  return envs;
}

int compare_torch_versions(const std::string& a, const std::string& b) {
  auto parts = [](const std::string& v) {
    std::vector<long> p;
    size_t i = 0;
    while (i < v.size() && p.size() < 3) {
      size_t j = i;
      while (j < v.size() && std::isdigit(static_cast<unsigned char>(v[j]))) ++j;
      if (j == i) break;
      // Saturating, not std::stol: "2.99999999999999999999" is a version, not out_of_range.
      long n = 0;
      for (size_t k = i; k < j; ++k) n = n > (LONG_MAX - 9) / 10 ? LONG_MAX : n * 10 + (v[k] - '0');
      p.push_back(n);
      if (j >= v.size() || v[j] != '.') break;
      i = j + 1;
    }
    p.resize(3, 0);
    return p;
  };
  auto pa = parts(a), pb = parts(b);
  return pa < pb ? -1 : pa > pb ? 1 : 0;
}

std::string expected_outcome(const std::vector<ExpectRule>& rules, const std::string& torch, bool cuda) {
  for (auto& x : rules)
    if (version_in_range(torch, x.torch) && (x.device == "any" || x.device == (cuda ? "cuda" : "cpu"))) return x.outcome;
  return "";
}

std::string expectation_verdict(const std::string& expected, const std::string& got) {
  if (expected.empty()) return "new";
  if (outcome_matches(expected, got)) return "as-expected";
  if (got == "pass") return "fixed";
  if (expected == "pass") return "regressed";
  return "changed";
}

MatrixReport run_matrix(const MatrixOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  MatrixReport rep;
  rep.rows = opt.rows;
  rep.cols.resize(opt.envs.size());
  std::vector<std::vector<MatrixCell>> by_col(opt.envs.size());
  std::atomic<size_t> next{0};
  std::mutex progress_mu;
  auto say = [&](const std::string& s) {
    if (!opt.progress) return;
    std::lock_guard<std::mutex> lock(progress_mu);
    opt.progress(s);
  };
  auto work = [&] {
    for (size_t k; (k = next++) < opt.envs.size();) {
      MatrixColumn& col = rep.cols[k];
      col.env = opt.envs[k];
      std::unique_ptr<SubjectWorker> w;
      try {
        WorkerOptions wo;
        wo.python = col.env.python;
        wo.timeout_s = opt.timeout_s;
        wo.label = col.env.label;
        w = std::make_unique<SubjectWorker>(wo);
        col.info = w->environment();
      } catch (const std::exception& e) {
        col.error = e.what();
        say(fmt::format("{}: cannot start: {}", col.env.label, col.error));
      }
      const bool cuda = !col.info.gpu.empty();
      for (auto& row : opt.rows) {
        MatrixCell cell;
        auto c0 = std::chrono::steady_clock::now();
        if (!w) {
          cell.outcome = "env-error";
          cell.verdict = "skipped";
        } else if (row.c.device == Device::CUDA && !cuda) {
          cell.outcome = "skipped";
          cell.verdict = "skipped";
        } else {
          w->reset();  // hermetic rows: no compiled state carried over from the previous one
          RunOptions ro;
          ro.subject = row.subject;
          ro.subject_path = opt.subject_path;
          ro.runner = w.get();
          cell.rep = run_case(row.c, ro);
          cell.outcome = cell.rep->outcome;
          cell.expected = expected_outcome(row.expect, col.info.torch, cuda);
          cell.verdict = expectation_verdict(cell.expected, cell.outcome);
        }
        cell.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
        if (cell.rep)
          say(fmt::format("torch {} | {} {} -> {} [{}] ({:.1f} s)", col.info.torch, row.id, row.subject, cell.outcome,
                          cell.verdict, cell.wall_s));
        by_col[k].push_back(std::move(cell));
      }
    }
  };
  std::vector<std::thread> pool;
  for (int i = 0; i < std::max(1, opt.jobs); ++i) pool.emplace_back(work);
  for (auto& t : pool) t.join();

  // Columns in release order (a broken env last).
  std::vector<size_t> order(rep.cols.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (rep.cols[a].error.empty() != rep.cols[b].error.empty()) return rep.cols[a].error.empty();
    return compare_torch_versions(rep.cols[a].info.torch, rep.cols[b].info.torch) < 0;
  });
  std::vector<MatrixColumn> cols;
  for (size_t i : order) cols.push_back(rep.cols[i]);
  rep.cols = cols;
  rep.cells.assign(rep.rows.size(), {});
  for (size_t r = 0; r < rep.rows.size(); ++r)
    for (size_t i : order) rep.cells[r].push_back(by_col[i][r]);
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

namespace {

// "tier2-lowering@compiled:inductor" -> "tier2-lowering@inductor" (the stage is what varies).
std::string short_outcome(const std::string& o) {
  std::string s = o;
  if (auto p = s.find("@compiled:"); p != std::string::npos) s.replace(p, 10, "@");
  return s;
}

// Marked only where the corpus pins something for this row (workaround rows pin nothing).
bool marked(const MatrixRow& row, const MatrixCell& c) {
  return !row.expect.empty() && c.verdict != "as-expected" && c.verdict != "skipped";
}

std::string cell_text(const MatrixRow& row, const MatrixCell& c) {
  std::string s = short_outcome(c.outcome);
  if (marked(row, c)) s += " [" + c.verdict + "]";
  return s;
}

bool all_skipped(const std::vector<MatrixCell>& cells) {
  return std::all_of(cells.begin(), cells.end(), [](auto& c) { return c.outcome == "skipped"; });
}

std::string col_title(const MatrixColumn& c) {
  return c.error.empty() ? "torch " + c.info.torch : c.env.label + " (broken)";
}

std::string ladder_text(const RunReport& r) {
  std::string s;
  for (auto& st : r.ladder) s += fmt::format("{}{}={}", s.empty() ? "" : " ", st.backend, st.pass ? "ok" : st.what);
  return s;
}

// Why a cell failed: the first error's signature and what it matched, or the first judge finding.
std::string why_text(const RunReport& r) {
  for (auto& o : r.oracles) {
    if (o.pass() || o.status == SubjectStatus::UNSUPPORTED) continue;
    if (o.signature) {
      std::string m = o.signature->matched.empty() ? o.signature->title : o.signature->matched;
      if (m.size() > 240) m = m.substr(0, 240) + "…";
      std::string s = fmt::format("{} ({}, phase {}): {}", o.signature->id, o.oracle, o.phase, m);
      if (!o.signature->innermost_torch_frame.empty()) s += " — innermost torch frame " + o.signature->innermost_torch_frame;
      return s;
    }
    if (o.verdict && o.verdict->first_failure()) {
      auto* f = o.verdict->first_failure();
      return fmt::format("{}: {} {} {}", o.oracle, f->output, name(f->finding), f->detail);
    }
  }
  for (auto& o : r.oracles)
    if (o.status == SubjectStatus::UNSUPPORTED) return o.oracle + " unsupported: " + o.reason;
  return "";
}

}  // namespace

std::string matrix_text(const MatrixReport& r) {
  std::vector<std::string> head{"case", "subject"};
  for (auto& c : r.cols) head.push_back(col_title(c));
  std::vector<std::vector<std::string>> table{head};
  std::string omitted;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (all_skipped(r.cells[i])) {
      omitted += " " + r.rows[i].id + " (" + r.rows[i].subject + ")";
      continue;
    }
    std::vector<std::string> line{r.rows[i].id, r.rows[i].subject};
    for (auto& c : r.cells[i]) line.push_back(cell_text(r.rows[i], c));
    table.push_back(line);
  }
  std::vector<size_t> w(head.size(), 0);
  for (auto& l : table)
    for (size_t k = 0; k < l.size(); ++k) w[k] = std::max(w[k], l[k].size());
  std::string s;
  for (auto& l : table) {
    for (size_t k = 0; k < l.size(); ++k) s += fmt::format("{:<{}}{}", l[k], w[k], k + 1 < l.size() ? "  " : "\n");
  }
  s += "cells: outcome (signature@first failing stage); [verdict] where it differs from the corpus expectation for that torch\n";
  if (!omitted.empty()) s += "omitted (needs CUDA in every environment):" + omitted + "\n";
  for (auto& c : r.cols)
    if (!c.error.empty()) s += fmt::format("{} ({}): {}\n", c.env.label, c.env.python, c.error);
  return s;
}

std::string matrix_markdown(const MatrixReport& r) {
  Markdown md;
  List envs;
  for (auto& c : r.cols)
    envs.items.push_back(c.error.empty()
                             ? fmt::format("{}: torch {}, Python {}, triton {}{}", md_code(c.env.python), c.info.torch,
                                           c.info.python, c.info.triton.empty() ? "-" : c.info.triton,
                                           c.info.gpu.empty() ? ", CPU" : ", " + c.info.gpu)
                             : fmt::format("{}: cannot start: {}", md_code(c.env.python), c.error.substr(0, 200)));
  md.add(envs);
  Table table{{"case", "subject"}, {}};
  for (auto& c : r.cols) table.columns.push_back(col_title(c));
  std::string omitted;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (all_skipped(r.cells[i])) {
      omitted += fmt::format(" `{}` (`{}`)", r.rows[i].id, r.rows[i].subject);
      continue;
    }
    std::vector<std::string> line{md_code(r.rows[i].id), md_code(r.rows[i].subject)};
    for (auto& c : r.cells[i]) {
      std::string t = md_code(short_outcome(c.outcome));
      if (marked(r.rows[i], c))
        t += c.expected.empty() ? " (no expectation for this torch)"
                                : fmt::format(" ({}; expected `{}`)", c.verdict, short_outcome(c.expected));
      line.push_back(t);
    }
    table.row(std::move(line));
  }
  md.add(table);
  if (!omitted.empty()) md.paragraph("Omitted (need CUDA in every environment):" + omitted);
  md.paragraph("Ladder (eager → aot_eager → aot_eager_decomp_partition → inductor) and cause of each failing cell; torch "
               "versions that fail the same way share a line:");
  List causes;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    std::vector<std::pair<std::string, std::string>> lines;  // detail -> versions
    for (size_t k = 0; k < r.cols.size(); ++k) {
      const MatrixCell& c = r.cells[i][k];
      if (!c.rep || c.outcome == "pass") continue;
      std::string detail =
          (c.rep->ladder.empty() ? "" : "ladder " + ladder_text(*c.rep) + "; ") + why_text(*c.rep);
      auto it = std::find_if(lines.begin(), lines.end(), [&](auto& l) { return l.first == detail; });
      if (it == lines.end()) lines.push_back({detail, r.cols[k].info.torch});
      else it->second += ", " + r.cols[k].info.torch;
    }
    for (auto& [detail, versions] : lines)
      causes.items.push_back(
          fmt::format("{} {}, torch {}: {}", md_code(r.rows[i].id), md_code(r.rows[i].subject), versions, detail));
  }
  md.add(causes);
  return render_markdown(md);
}

nlohmann::ordered_json matrix_json(const MatrixReport& r) {
  nlohmann::ordered_json j;
  auto cols = nlohmann::ordered_json::array();
  for (auto& c : r.cols) {
    nlohmann::ordered_json cj{{"label", c.env.label}, {"python", c.env.python}};
    if (c.error.empty()) cj["environment"] = nlohmann::ordered_json::parse(c.info.to_json());
    else cj["error"] = c.error;
    cols.push_back(cj);
  }
  j["environments"] = cols;
  auto rows = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.rows.size(); ++i) {
    nlohmann::ordered_json rj{{"case", r.rows[i].id}, {"subject", r.rows[i].subject}};
    auto cells = nlohmann::ordered_json::array();
    for (size_t k = 0; k < r.cols.size(); ++k) {
      const MatrixCell& c = r.cells[i][k];
      nlohmann::ordered_json cj{{"torch", r.cols[k].info.torch}, {"outcome", c.outcome}, {"expected", c.expected},
                                {"verdict", c.verdict}, {"wall_s", c.wall_s}};
      if (c.rep) {
        cj["first_failing_stage"] = c.rep->first_failing_stage;
        auto lad = nlohmann::ordered_json::array();
        for (auto& st : c.rep->ladder) lad.push_back({{"backend", st.backend}, {"pass", st.pass}, {"what", st.what}});
        cj["ladder"] = lad;
        cj["why"] = why_text(*c.rep);
        double worst = 0;
        for (auto& o : c.rep->oracles)
          if (o.verdict) worst = std::max(worst, o.verdict->worst_ratio());
        cj["worst_err_over_bound"] = worst;
      }
      cells.push_back(cj);
    }
    rj["cells"] = cells;
    rows.push_back(rj);
  }
  j["rows"] = rows;
  j["wall_s"] = r.wall_s;
  return j;
}

}  // namespace flce
