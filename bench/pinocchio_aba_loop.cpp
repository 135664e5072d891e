// Pinocchio's ABA timed in a compiled loop, without Python (dockstand bench, docs/bench.md).
//
// Built by bench/pinocchio_cpp.py against the `pin` wheel's own headers and library: with
// PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION the call below is declared `extern template` by
// pinocchio/src/algorithm/aba.hxx, so it links to the instantiation compiled into the wheel's
// libpinocchio_default.so -- the machine code `pin.aba(model, data, q, v, tau, fext)` runs, with
// the same argument types (Eigen::Ref<const VectorXd>, std::vector<Force>), minus the binding.
//
// C interface (ctypes): pab_new builds the model from flat arrays (joints in Pinocchio's
// depth-first order), pab_set sets the inputs, pab_run calls aba n times and returns the
// nanoseconds the loop took (steady_clock), pab_ddq copies the last result out.
#include <chrono>
#include <vector>

#include "pinocchio/algorithm/aba.hpp"
#include "pinocchio/multibody.hpp"

namespace {

struct Handle {
  pinocchio::Model model;
  pinocchio::Data *data = nullptr;
  Eigen::VectorXd q, v, tau;
  std::vector<pinocchio::Force> fext;
  double sink = 0.0;
};

pinocchio::JointModel joint(int type, int axis) {
  using namespace pinocchio;
  if (type == 1) {
    if (axis == 0) return JointModelRX();
    if (axis == 1) return JointModelRY();
    return JointModelRZ();
  }
  if (axis == 0) return JointModelPX();
  if (axis == 1) return JointModelPY();
  return JointModelPZ();
}

}  // namespace

extern "C" {

// parent[j]: -1 for the universe, else an earlier joint's index; type: 1 revolute, 0 prismatic;
// R (n x 9, row-major) and t (n x 3): the joint placement on the parent; mass, com (n x 3) and
// inertia about the centre of mass (n x 9) of each body; gravity (3).
void *pab_new(int n, const int *parent, const int *type, const int *axis, const double *R,
              const double *t, const double *mass, const double *com, const double *I,
              const double *gravity) {
  auto *h = new Handle();
  std::vector<pinocchio::JointIndex> ids(n);
  for (int j = 0; j < n; ++j) {
    Eigen::Matrix3d Rj;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) Rj(a, b) = R[9 * j + 3 * a + b];
    pinocchio::SE3 place(Rj, Eigen::Vector3d(t[3 * j], t[3 * j + 1], t[3 * j + 2]));
    pinocchio::JointIndex p = parent[j] < 0 ? 0 : ids[parent[j]];
    ids[j] = h->model.addJoint(p, joint(type[j], axis[j]), place, "j" + std::to_string(j));
    Eigen::Matrix3d Ic;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) Ic(a, b) = I[9 * j + 3 * a + b];
    h->model.appendBodyToJoint(
        ids[j],
        pinocchio::Inertia(mass[j], Eigen::Vector3d(com[3 * j], com[3 * j + 1], com[3 * j + 2]), Ic),
        pinocchio::SE3::Identity());
  }
  h->model.gravity = pinocchio::Motion(Eigen::Vector3d(gravity[0], gravity[1], gravity[2]),
                                       Eigen::Vector3d::Zero());
  h->data = new pinocchio::Data(h->model);
  h->q = Eigen::VectorXd::Zero(h->model.nq);
  h->v = Eigen::VectorXd::Zero(h->model.nv);
  h->tau = Eigen::VectorXd::Zero(h->model.nv);
  h->fext.assign(h->model.njoints, pinocchio::Force::Zero());
  return h;
}

// q, v, tau (nv each); fext (n x 6: [f; m] of each joint's body in its joint frame).
void pab_set(void *hp, const double *q, const double *v, const double *tau, const double *fext) {
  auto *h = static_cast<Handle *>(hp);
  for (int i = 0; i < h->model.nv; ++i) {
    h->q[i] = q[i];
    h->v[i] = v[i];
    h->tau[i] = tau[i];
  }
  for (int j = 1; j < h->model.njoints; ++j) {
    const double *f = fext + 6 * (j - 1);
    h->fext[j] = pinocchio::Force(Eigen::Vector3d(f[0], f[1], f[2]), Eigen::Vector3d(f[3], f[4], f[5]));
  }
}

long long pab_run(void *hp, long long n) {
  auto *h = static_cast<Handle *>(hp);
  const Eigen::Ref<const Eigen::VectorXd> q(h->q), v(h->v), tau(h->tau);
  double s = 0.0;
  auto t0 = std::chrono::steady_clock::now();
  for (long long i = 0; i < n; ++i) {
    s += pinocchio::aba<double, 0, pinocchio::JointCollectionDefaultTpl, Eigen::Ref<const Eigen::VectorXd>,
                        Eigen::Ref<const Eigen::VectorXd>, Eigen::Ref<const Eigen::VectorXd>,
                        pinocchio::Force, std::allocator<pinocchio::Force>>(
        h->model, *h->data, q, v, tau, h->fext, pinocchio::Convention::LOCAL)[0];
  }
  auto t1 = std::chrono::steady_clock::now();
  h->sink += s;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
}

void pab_ddq(void *hp, double *out) {
  auto *h = static_cast<Handle *>(hp);
  for (int i = 0; i < h->model.nv; ++i) out[i] = h->data->ddq[i];
}

void pab_free(void *hp) {
  auto *h = static_cast<Handle *>(hp);
  delete h->data;
  delete h;
}
}
