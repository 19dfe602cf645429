// Stress corpus: Eigen (libeigen3-dev) and a spread of Boost's header-only
// libraries (libboost-dev): heavy templates, macros and dependent code.
#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <boost/algorithm/string.hpp>
#include <boost/any.hpp>
#include <boost/circular_buffer.hpp>
#include <boost/container/flat_map.hpp>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/intrusive/list.hpp>
#include <boost/lexical_cast.hpp>
#include <boost/multi_array.hpp>
#include <boost/optional.hpp>
#include <boost/program_options.hpp>
#include <boost/property_tree/json_parser.hpp>
#include <boost/tokenizer.hpp>
#include <boost/variant.hpp>
